import type { RouteObject } from 'react-router';

export const settingsRoutes: RouteObject[] = [
  { path: 'agents', lazy: async () => ({ Component: (await import('./AgentsPage')).AgentsPage }) },
  { path: 'members', lazy: async () => ({ Component: (await import('./MembersPage')).MembersPage }) },
  {
    path: 'accounts/connect/:provider',
    lazy: async () => ({ Component: (await import('./ConnectCallbackPage')).ConnectCallbackPage }),
  },
  { path: 'accounts', lazy: async () => ({ Component: (await import('./AccountsPage')).AccountsPage }) },
  {
    path: 'accounts/shopify',
    lazy: async () => ({ Component: (await import('./ShopifyCallback')).ShopifyCallback }),
  },
  { path: 'webhooks', lazy: async () => ({ Component: (await import('./WebhooksPage')).WebhooksPage }) },
  { path: 'account', lazy: async () => ({ Component: (await import('./AccountPage')).AccountPage }) },
];
