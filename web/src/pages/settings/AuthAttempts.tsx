import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { dateTime } from '../../lib/format';
import { FIRST_PAGE, useKeysetList } from '../../lib/keyset-list';
import { PagedTable } from '../../ui/PagedTable';

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
  // Not in the URL: the page it sits on (agents and keys) keeps none of its state there.
  const [position, go] = useState(FIRST_PAGE);
  const list = useKeysetList<Attempt>({
    key: ['agent-auth-attempts'],
    table: 'agent_auth_attempts',
    select: 'id, key_prefix, ip, outcome, reason, created_at',
    pageSize: PAGE,
    position,
    go,
    // A log: opening the page shows the attempts up to now, not a copy from a minute ago.
    staleTime: 0,
  });
  return (
    <section aria-labelledby="attempts-heading">
      <h2 id="attempts-heading">Sign-in attempts by agents</h2>
      <PagedTable
        {...list}
        columns={columns}
        caption="Agent sign-in attempts"
        empty="No agent has exchanged a key yet"
      />
    </section>
  );
}
