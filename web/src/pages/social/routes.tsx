import type { RouteObject } from 'react-router';

export const socialRoutes: RouteObject[] = [
  { path: 'social', lazy: async () => ({ Component: (await import('./CalendarPage')).CalendarPage }) },
  { path: 'social/new', lazy: async () => ({ Component: (await import('./NewPostPage')).NewPostPage }) },
  { path: 'social/:id', lazy: async () => ({ Component: (await import('./PostPage')).PostPage }) },
];
