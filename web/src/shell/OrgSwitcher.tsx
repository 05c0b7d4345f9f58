import { useMutation, useQuery } from '@tanstack/react-query';
import { must } from '../lib/api';
import { useClaims, useSession } from '../lib/session';
import { supabase } from '../lib/supabase';
import { ErrorNote } from '../ui/ErrorNote';

type Membership = { organization_id: string; role: string; organizations: { name: string } | null };

/** The person's organizations (RLS shows their own memberships everywhere); picking one switches. */
export function OrgSwitcher() {
  const claims = useClaims();
  const { switchOrganization } = useSession();
  const memberships = useQuery({
    queryKey: ['memberships', claims.userId],
    queryFn: async () =>
      must(
        await supabase
          .from('organization_members')
          .select('organization_id, role, organizations(name)')
          .eq('user_id', claims.userId)
          .order('created_at'),
      ) as unknown as Membership[],
  });
  const change = useMutation({ mutationFn: switchOrganization });
  const rows = memberships.data ?? [];
  return (
    <div className="org-switcher">
      <label htmlFor="org-switch" className="visually-hidden">
        Organization
      </label>
      <select
        id="org-switch"
        value={claims.organizationId ?? ''}
        disabled={change.isPending || rows.length === 0}
        onChange={(e) => change.mutate(e.target.value)}
      >
        {rows.map((m) => (
          <option key={m.organization_id} value={m.organization_id}>
            {m.organizations?.name ?? m.organization_id}
          </option>
        ))}
      </select>
      <ErrorNote error={change.error} />
    </div>
  );
}
