import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { must } from '../../lib/api';
import { ago, date } from '../../lib/format';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';
import { PagedTable } from '../../ui/PagedTable';
import { ConfirmButton } from './Confirm';
import { type ApiKey, KEYS_PAGE, listKeys } from './keys';

// Revocation is the key's is_active set to false on /rest/v1 (the only way the service offers).
const revokeKey = async (id: string) =>
  must(await supabase.from('agent_api_keys').update({ is_active: false }).eq('id', id).select('id').single());

function Revoke({ k }: { k: ApiKey }) {
  const queries = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => revokeKey(k.id),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['agent-keys'] }),
  });
  if (!k.is_active) return <span>Revoked</span>;
  return (
    <>
      <ConfirmButton
        label="Revoke"
        name={`Revoke ${k.name}`}
        question={`Revoke “${k.name}”? Agents using it are refused from their next request.`}
        confirmLabel="Yes, revoke"
        pending={revoke.isPending}
        onConfirm={() => revoke.mutate()}
      />
      <ErrorNote error={revoke.error} />
    </>
  );
}

const col = createColumnHelper<ApiKey>();
const columns = [
  col.accessor('key_prefix', {
    header: 'Key or app',
    // A grant has no key: the app a person connected by signing in (MCP OAuth).
    cell: ({ row: { original: k } }) =>
      k.key_prefix ? (
        <code>{k.key_prefix}…</code>
      ) : (
        <span title={k.oauth_client_id ?? ''}>Connected app</span>
      ),
  }),
  col.accessor('name', { header: 'Name' }),
  col.display({
    id: 'scopes',
    header: 'Scopes',
    cell: ({ row: { original: k } }) => (
      <>
        {k.scopes.join(', ')}
        {k.warning && <small className="hint"> (granted today: {k.effective_scopes.join(', ')})</small>}
      </>
    ),
  }),
  col.accessor('is_active', { header: 'Active', cell: (c) => (c.getValue() ? 'Active' : 'Revoked') }),
  col.accessor('created_at', { header: 'Created', cell: (c) => date(c.getValue()) }),
  col.accessor('expires_at', { header: 'Expires', cell: (c) => date(c.getValue()) }),
  col.accessor('last_used_at', {
    header: 'Last used',
    cell: (c) => (c.getValue() ? ago(c.getValue()) : 'Never'),
  }),
  col.display({ id: 'revoke', header: 'Revoke', cell: ({ row }) => <Revoke k={row.original} /> }),
];

export function KeyList() {
  const [page, setPage] = useState(0);
  const list = useQuery({
    queryKey: ['agent-keys', page],
    staleTime: 0, // last use changes while the page is away
    queryFn: () => listKeys(page),
    placeholderData: keepPreviousData,
  });
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">Keys and connected apps</h2>
      <PagedTable
        query={list}
        rows={list.data?.data}
        total={list.data?.pagination.total}
        columns={columns}
        caption="Agent API keys and connected apps"
        empty="No keys yet"
        page={page}
        pageSize={KEYS_PAGE}
        onPage={setPage}
      />
    </section>
  );
}
