import { AuthLayout } from '../auth/AuthLayout';
import { useSession } from '../lib/session';
import { Invitations } from './Invitations';
import { NewOrganizationForm } from './NewOrganizationForm';

/** A signed-in person who belongs nowhere yet: start an organization or accept an invitation. */
export function NoOrganization() {
  const { signOut } = useSession();
  return (
    <AuthLayout title="Create your organization">
      <NewOrganizationForm label="Organization name" submitLabel="Create organization" />
      <Invitations />
      <p>
        <button type="button" className="link" onClick={() => signOut()}>
          Sign out
        </button>
      </p>
    </AuthLayout>
  );
}
