import { useQuery } from '@tanstack/react-query';
import { invoke } from '../../lib/api';

type Members = { data: { user_id: string; email: string }[] };

/**
 * Names for the `actor` of status events (`user:<id>`, `agent:<key id>`, `service`; see
 * app.actor() in migrations/0007). People are named from the organization's roster, which every
 * member may read; someone who has left shows as a former member.
 */
export function useActorName(): (actor: string | null) => string {
  const roster = useQuery({
    queryKey: ['organization-members', 'names'],
    queryFn: () => invoke<Members>('organization-members', { query: { per_page: 100 } }),
    staleTime: 60_000,
  });
  return (actor) => {
    if (!actor || actor === 'service') return 'The service';
    const [kind, id] = actor.split(':');
    if (kind === 'agent') return `Agent (key ${id?.slice(0, 8)}…)`;
    if (kind === 'user') {
      const email = roster.data?.data.find((m) => m.user_id === id)?.email;
      return email ?? (roster.isPending ? '…' : 'A former member');
    }
    return actor;
  };
}
