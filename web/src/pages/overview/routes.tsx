import type { RouteObject } from 'react-router';
import { Pending } from '../../ui/Pending';

export const overviewRoutes: RouteObject[] = [{ index: true, element: <Pending area="Overview" /> }];
