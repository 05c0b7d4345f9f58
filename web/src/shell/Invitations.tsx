import { useQuery } from '@tanstack/react-query';
import { invoke } from '../lib/api';
import { date } from '../lib/format';
import { ErrorNote } from '../ui/ErrorNote';

export type Invitation = {
  id: string;
  organization_id: string;
  organization_name: string;
  role: string;
  invited_by_email: string | null;
  expires_at: string;
};

export const myInvitations = () =>
  invoke<{ data: Invitation[] }>('invitations', { query: { per_page: 100 } });

/**
 * Invitations addressed to the signed-in person. Answering needs the token that exists only in
 * the invitation mail, so the way to answer is that mail's link (the /invitations page).
 */
export function Invitations() {
  const list = useQuery({ queryKey: ['my-invitations'], queryFn: myInvitations });
  const rows = list.data?.data ?? [];
  if (list.error) return <ErrorNote error={list.error} />;
  if (rows.length === 0) return null;
  return (
    <section aria-labelledby="invitations-heading">
      <h2 id="invitations-heading">Invitations waiting for you</h2>
      <ul className="plain">
        {rows.map((inv) => (
          <li key={inv.id}>
            <strong>{inv.organization_name}</strong> invites you as {inv.role}
            {inv.invited_by_email && ` (from ${inv.invited_by_email})`}, until {date(inv.expires_at)}.
          </li>
        ))}
      </ul>
      <p className="hint">Open the link in the invitation email to accept or decline.</p>
    </section>
  );
}
