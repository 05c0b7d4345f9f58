import type { RouteObject } from 'react-router';

export const inventoryRoutes: RouteObject[] = [
  { path: 'inventory', lazy: async () => ({ Component: (await import('./InventoryPage')).InventoryPage }) },
  { path: 'inventory/:id', lazy: async () => ({ Component: (await import('./ItemPage')).ItemPage }) },
];
