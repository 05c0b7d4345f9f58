import type { RouteObject } from 'react-router';
import { Pending } from '../../ui/Pending';

export const inboxRoutes: RouteObject[] = [{ path: 'inbox', element: <Pending area="Inbox" /> }];
