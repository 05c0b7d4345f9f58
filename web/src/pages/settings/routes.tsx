import type { RouteObject } from 'react-router';
import { Pending } from '../../ui/Pending';

export const settingsRoutes: RouteObject[] = [{ path: 'agents', element: <Pending area="Settings" /> }];
