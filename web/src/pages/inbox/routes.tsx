import type { RouteObject } from 'react-router';

// One route for the inbox and a conversation in it: the list stays mounted beside the open thread
// (two panes on a desktop, one at a time on a phone: InboxPage.tsx), and /app/inbox/{id} still
// links to a conversation.
export const inboxRoutes: RouteObject[] = [
  {
    path: 'inbox',
    lazy: async () => ({ Component: (await import('./InboxPage')).InboxPage }),
    children: [
      { index: true, lazy: async () => ({ Component: (await import('./InboxPage')).NoneOpen }) },
      {
        path: ':id',
        lazy: async () => ({ Component: (await import('./ConversationPage')).ConversationPage }),
      },
    ],
  },
];
