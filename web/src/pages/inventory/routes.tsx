import type { RouteObject } from 'react-router';
import { Pending } from '../../ui/Pending';

export const inventoryRoutes: RouteObject[] = [{ path: 'inventory', element: <Pending area="Inventory" /> }];
