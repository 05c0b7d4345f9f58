import type { RouteObject } from 'react-router';

export const contactRoutes: RouteObject[] = [
  { path: 'contacts', lazy: async () => ({ Component: (await import('./ContactsPage')).ContactsPage }) },
  { path: 'contacts/:id', lazy: async () => ({ Component: (await import('./ContactPage')).ContactPage }) },
];
