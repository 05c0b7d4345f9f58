import './settings.css';
import { useNavigate } from 'react-router';
import { NewPasswordForm } from '../../auth/NewPassword';
import { useClaims } from '../../lib/session';
import { Invitations } from '../../shell/Invitations';
import { NewOrganizationForm } from '../../shell/NewOrganizationForm';
import { Page } from '../../ui/Page';

export function AccountPage() {
  const claims = useClaims();
  const navigate = useNavigate();
  return (
    <Page title="Your account">
      <p>
        Signed in as <strong>{claims.email}</strong>, {claims.role} of this organization.
      </p>
      <section className="panel" aria-labelledby="password-heading">
        <h2 id="password-heading">Change your password</h2>
        <NewPasswordForm />
      </section>
      <Invitations />
      <section className="panel" aria-labelledby="org-heading">
        <h2 id="org-heading">Start another organization</h2>
        <p className="hint">
          You become its owner, on the free plan; switch between organizations at the top.
        </p>
        <NewOrganizationForm
          label="New organization name"
          submitLabel="Create and switch to it"
          onDone={() => navigate('/app')}
        />
      </section>
    </Page>
  );
}
