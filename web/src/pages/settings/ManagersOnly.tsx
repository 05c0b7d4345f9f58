import type { ReactNode } from 'react';
import { canManage } from '../../lib/claims';
import { useClaims } from '../../lib/session';
import { Page } from '../../ui/Page';

/**
 * Pages for owners and admins. The nav hides them from members, but a member can still type the
 * address: they get a plain explanation instead of a page of refusals (the service refuses too).
 */
export function ManagersOnly({
  title,
  refusal,
  children,
}: {
  title: string;
  refusal: string;
  children: ReactNode;
}) {
  const claims = useClaims();
  if (canManage(claims)) return <>{children}</>;
  return (
    <Page title={title}>
      <p className="panel" role="status">
        {refusal} You are a {claims.role ?? 'member'} of this organization; ask an owner or admin.
      </p>
    </Page>
  );
}
