import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field, Select } from '../../ui/Field';
import { inviteMember, type Role } from './members';

type Form = { email: string; role: Role };

/** Invites by email; only an owner may invite an owner, so admins are not offered it. */
export function InviteForm({ isOwner }: { isOwner: boolean }) {
  const queries = useQueryClient();
  const { register, handleSubmit, reset } = useForm<Form>({ defaultValues: { email: '', role: 'member' } });
  const invite = useMutation({
    mutationFn: inviteMember,
    onSuccess: async () => {
      reset();
      await queries.invalidateQueries({ queryKey: ['roster'] });
    },
  });
  return (
    <form className="grid-form" onSubmit={handleSubmit((f) => invite.mutate(f))}>
      <Field label="Email to invite" type="email" autoComplete="off" required {...register('email')} />
      <Select label="Role" {...register('role')}>
        <option value="member">Member: the daily work</option>
        <option value="admin">Admin: also members, keys and accounts</option>
        {isOwner && <option value="owner">Owner: also the plan</option>}
      </Select>
      <ErrorNote error={invite.error} labels={{ email: 'Email', role: 'Role' }} />
      {invite.isSuccess && (
        <p role="status">Invitation sent to {invite.data.email}. It is valid for 7 days.</p>
      )}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={invite.isPending}>
          Send invitation
        </button>
      </div>
    </form>
  );
}
