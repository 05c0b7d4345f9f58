import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { must } from '../../lib/api';
import { dateTime } from '../../lib/format';
import { supabase } from '../../lib/supabase';
import { DataTable } from '../../ui/DataTable';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading } from '../../ui/Page';
import { Pager } from '../../ui/Pager';

type Attempt = {
  id: number;
  key_prefix: string | null;
  ip: string | null;
  outcome: 'success' | 'failure' | 'rate_limited';
  reason: string;
  created_at: string;
};

const PAGE = 20;
const OUTCOMES = { success: 'Success', failure: 'Refused', rate_limited: 'Rate limited' };
const col = createColumnHelper<Attempt>();
const columns = [
  col.accessor('created_at', { header: 'When', cell: (c) => dateTime(c.getValue()) }),
  col.accessor('key_prefix', {
    header: 'Key',
    cell: (c) => (c.getValue() ? <code>{c.getValue()}…</code> : '—'),
  }),
  col.accessor('outcome', { header: 'Outcome', cell: (c) => OUTCOMES[c.getValue()] ?? c.getValue() }),
  col.accessor('reason', { header: 'Reason' }),
  col.accessor('ip', { header: 'Address', cell: (c) => c.getValue() ?? '—' }),
];

/** Every agent-auth exchange for this organization's keys, newest first (row-level security scopes it). */
export function AuthAttempts() {
  const [page, setPage] = useState(0);
  const list = useQuery({
    queryKey: ['agent-auth-attempts', page],
    // A log: opening the page shows the attempts up to now, not a copy from a minute ago.
    staleTime: 0,
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const res = await supabase
        .from('agent_auth_attempts')
        .select('id, key_prefix, ip, outcome, reason, created_at', { count: 'exact' })
        .order('created_at', { ascending: false })
        .order('id', { ascending: false })
        .range(page * PAGE, page * PAGE + PAGE - 1);
      return { rows: must(res) as Attempt[], total: res.count };
    },
  });
  return (
    <section aria-labelledby="attempts-heading">
      <h2 id="attempts-heading">Sign-in attempts by agents</h2>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : (
        <>
          <DataTable
            rows={list.data?.rows ?? []}
            columns={columns}
            caption="Agent sign-in attempts"
            empty="No agent has exchanged a key yet"
          />
          <Pager page={page} pageSize={PAGE} total={list.data?.total} onPage={setPage} />
        </>
      )}
    </section>
  );
}
