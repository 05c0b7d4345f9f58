import type { RouteObject } from 'react-router';

export const orderRoutes: RouteObject[] = [
  { path: 'orders', lazy: async () => ({ Component: (await import('./OrdersPage')).OrdersPage }) },
  { path: 'orders/new', lazy: async () => ({ Component: (await import('./NewOrderPage')).NewOrderPage }) },
  { path: 'orders/:id', lazy: async () => ({ Component: (await import('./OrderPage')).OrderPage }) },
];
