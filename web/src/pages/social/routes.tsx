import type { RouteObject } from 'react-router';
import { Pending } from '../../ui/Pending';

export const socialRoutes: RouteObject[] = [{ path: 'social', element: <Pending area="Social" /> }];
