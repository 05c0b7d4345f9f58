import './settings.css';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { useNavigate } from 'react-router';
import { NewPasswordForm } from '../../auth/NewPassword';
import { invoke } from '../../lib/api';
import { useClaims, useSession } from '../../lib/session';
import { Invitations } from '../../shell/Invitations';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field } from '../../ui/Field';
import { Page } from '../../ui/Page';

/** Another organization: created, then switched to (organization-create does not switch). */
function NewOrganization() {
  const { switchOrganization } = useSession();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const { register, handleSubmit } = useForm<{ name: string }>({ defaultValues: { name: '' } });
  const create = useMutation({
    mutationFn: async ({ name }: { name: string }) => {
      const created = await invoke<{ organization: { id: string } }>('organization-create', {
        body: { name },
      });
      await switchOrganization(created.organization.id);
      await queries.invalidateQueries();
    },
    onSuccess: () => navigate('/app'),
  });
  return (
    <form onSubmit={handleSubmit((f) => create.mutate(f))}>
      <Field label="New organization name" required maxLength={200} {...register('name')} />
      <ErrorNote error={create.error} labels={{ name: 'Organization name' }} />
      <button type="submit" className="primary" disabled={create.isPending}>
        Create and switch to it
      </button>
    </form>
  );
}

export function AccountPage() {
  const claims = useClaims();
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
        <NewOrganization />
      </section>
    </Page>
  );
}
