import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { invoke } from '../lib/api';
import { useSession } from '../lib/session';
import { myInvitations } from '../shell/Invitations';
import { ErrorNote } from '../ui/ErrorNote';
import { Loading } from '../ui/Page';
import { AuthLayout } from './AuthLayout';

const KEPT = 'svc.invitation';

/**
 * Where an invitation mail's link lands: `/invitations#invitation_id=…&token=…`. The fragment is
 * kept in this tab's storage while the person signs in, and removed from the address bar.
 */
function readInvitationLink(): { invitation_id: string; token: string } | null {
  const hash = new URLSearchParams(window.location.hash.slice(1));
  if (hash.get('invitation_id') && hash.get('token')) {
    sessionStorage.setItem(KEPT, JSON.stringify(Object.fromEntries(hash)));
    window.history.replaceState(null, '', window.location.pathname);
  }
  const kept = sessionStorage.getItem(KEPT);
  return kept ? JSON.parse(kept) : null;
}

export function InvitationAnswer() {
  const { session, switchOrganization } = useSession();
  const [link] = useState(readInvitationLink);
  const list = useQuery({ queryKey: ['my-invitations'], queryFn: myInvitations, enabled: !!session });
  const answer = useMutation({
    mutationFn: async (action: 'accept' | 'decline') => {
      if (!link) return;
      await invoke('invitations', { body: { ...link, action } });
      sessionStorage.removeItem(KEPT);
      const invitation = list.data?.data.find((i) => i.id === link.invitation_id);
      if (action === 'accept' && invitation) await switchOrganization(invitation.organization_id);
      return action;
    },
    onSuccess: (action) => {
      if (action === 'accept') window.location.assign('/app');
    },
  });

  if (!link) return <AuthLayout title="Invitation">{<p>This link carries no invitation.</p>}</AuthLayout>;
  if (session === undefined) return <Loading />;
  if (!session) {
    return (
      <AuthLayout title="You are invited">
        <p>
          Sign in with the address the invitation was sent to, or create an account with it; you come back
          here to answer.
        </p>
        <p>
          <Link to="/app/sign-in">Sign in</Link> · <Link to="/app/sign-up">Create an account</Link>
        </p>
      </AuthLayout>
    );
  }
  const invitation = list.data?.data.find((i) => i.id === link.invitation_id);
  return (
    <AuthLayout title="You are invited">
      {list.isPending ? (
        <Loading />
      ) : invitation ? (
        <p>
          <strong>{invitation.organization_name}</strong> invites you to join as {invitation.role}.
        </p>
      ) : (
        <p>
          This invitation is not for the account you are signed in with, or it has expired or been answered.
        </p>
      )}
      <ErrorNote error={answer.error ?? list.error} />
      {answer.data === 'decline' ? (
        <p role="status">You declined the invitation.</p>
      ) : (
        invitation && (
          <div className="actions">
            <button
              type="button"
              className="primary"
              disabled={answer.isPending}
              onClick={() => answer.mutate('accept')}
            >
              Accept
            </button>
            <button type="button" disabled={answer.isPending} onClick={() => answer.mutate('decline')}>
              Decline
            </button>
          </div>
        )
      )}
      <p>
        <Link to="/app">Go to the dashboard</Link>
      </p>
    </AuthLayout>
  );
}
