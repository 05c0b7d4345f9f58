import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ErrorNote } from '../../ui/ErrorNote';
import { changeRole, type Member, type Role } from './members';

/**
 * A member's role, changeable by owners and admins. Only owners are offered "owner", and an admin
 * cannot change an owner's role; the service holds the same rules (and keeps the last owner).
 */
export function RolePicker({ member, isOwner }: { member: Member; isOwner: boolean }) {
  const queries = useQueryClient();
  const change = useMutation({
    mutationFn: (role: Role) => changeRole(member.user_id, role),
    onSettled: () => queries.invalidateQueries({ queryKey: ['roster'] }),
  });
  if (!isOwner && member.role === 'owner') return <>owner</>;
  return (
    <>
      <select
        aria-label={`Role of ${member.email}`}
        value={change.isPending ? change.variables : member.role}
        disabled={change.isPending}
        onChange={(e) => change.mutate(e.target.value as Role)}
      >
        {isOwner && <option value="owner">owner</option>}
        <option value="admin">admin</option>
        <option value="member">member</option>
      </select>
      <ErrorNote error={change.error} />
    </>
  );
}
