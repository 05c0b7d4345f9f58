import type { RouteObject } from 'react-router';
import { Pending } from '../../ui/Pending';

export const orderRoutes: RouteObject[] = [{ path: 'orders', element: <Pending area="Orders" /> }];
