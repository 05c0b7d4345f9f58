import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { AuthLayout } from '../auth/AuthLayout';
import { invoke } from '../lib/api';
import { useSession } from '../lib/session';
import { ErrorNote } from '../ui/ErrorNote';
import { Field } from '../ui/Field';
import { Invitations } from './Invitations';

/** A signed-in person who belongs nowhere yet: start an organization or accept an invitation. */
export function NoOrganization() {
  const { switchOrganization, signOut } = useSession();
  const { register, handleSubmit } = useForm<{ name: string }>();
  const queries = useQueryClient();
  const create = useMutation({
    mutationFn: async ({ name }: { name: string }) => {
      const created = await invoke<{ organization: { id: string } }>('organization-create', {
        body: { name },
      });
      await switchOrganization(created.organization.id);
      await queries.invalidateQueries();
    },
  });
  return (
    <AuthLayout title="Create your organization">
      <form onSubmit={handleSubmit((f) => create.mutate(f))}>
        <Field label="Organization name" required maxLength={200} {...register('name')} />
        <ErrorNote error={create.error} />
        <button type="submit" className="primary" disabled={create.isPending}>
          Create organization
        </button>
      </form>
      <Invitations />
      <p>
        <button type="button" className="link" onClick={() => signOut()}>
          Sign out
        </button>
      </p>
    </AuthLayout>
  );
}
