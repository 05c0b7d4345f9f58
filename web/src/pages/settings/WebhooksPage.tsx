import './settings.css';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';

import { invoke } from '../../lib/api';
import { dateTime } from '../../lib/format';
import { useClaims } from '../../lib/session';
import { useUrlFilters } from '../../lib/url-filters';
import { DataTable } from '../../ui/DataTable';
import { ErrorNote } from '../../ui/ErrorNote';
import { FilterSelect } from '../../ui/FilterSelect';
import { Loading, Page } from '../../ui/Page';
import { Pager } from '../../ui/Pager';
import { type ListEnvelope, PAGE_SIZE, pageQuery } from './list';
import { ManagersOnly } from './ManagersOnly';

type WebhookEvent = {
  id: string;
  provider: 'meta' | 'shopify' | 'internal';
  topic: string;
  status: 'pending' | 'processed' | 'failed' | 'rejected' | 'ignored';
  attempts: number;
  last_error: string | null;
  received_at: string;
};

const STATUSES = ['pending', 'processed', 'failed', 'rejected', 'ignored'] as const;
const REPLAYABLE = ['failed', 'rejected'];

const col = createColumnHelper<WebhookEvent>();

function WebhookDeliveries() {
  const claims = useClaims();
  const filters = useUrlFilters();
  const status = filters.get('status');
  const page = filters.page;
  const queries = useQueryClient();
  // Kept at the page: a replayed event leaves a "failed" filter, and its row with it.
  const replay = useMutation({
    mutationFn: (e: WebhookEvent) =>
      invoke<WebhookEvent>('webhook-events', { body: { id: e.id, action: 'replay' } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['webhook-events'] }),
  });
  const list = useQuery({
    queryKey: ['webhook-events', { status, page }],
    placeholderData: keepPreviousData,
    queryFn: () =>
      invoke<ListEnvelope<WebhookEvent>>('webhook-events', { query: { ...pageQuery(page), status } }),
  });
  const columns = [
    col.accessor('provider', { header: 'Provider' }),
    col.accessor('topic', { header: 'Topic' }),
    col.accessor('status', {
      header: 'Status',
      cell: (c) => <span className="badge">{c.getValue()}</span>,
    }),
    col.accessor('received_at', { header: 'Received', cell: (c) => dateTime(c.getValue()) }),
    col.accessor('attempts', { header: 'Attempts' }),
    col.accessor('last_error', { header: 'Error', cell: (c) => c.getValue() ?? '—' }),
    col.display({
      id: 'replay',
      header: 'Replay',
      // The service lets owners alone replay; admins see why there is no button.
      cell: ({ row: { original: e } }) =>
        !REPLAYABLE.includes(e.status) ? (
          '—'
        ) : claims.role === 'owner' ? (
          <button type="button" disabled={replay.isPending} onClick={() => replay.mutate(e)}>
            Replay {e.topic}
          </button>
        ) : (
          'Owners replay'
        ),
    }),
  ];
  const { set } = filters;
  return (
    <Page title="Webhook deliveries">
      <search className="filters">
        <FilterSelect
          label="Status"
          value={status}
          allLabel="Any status"
          options={STATUSES}
          onChange={(v) => set('status', v)}
        />
      </search>
      {replay.isSuccess && (
        <p role="status">
          The {replay.data.topic} delivery received {dateTime(replay.data.received_at)} is queued again.
        </p>
      )}
      <ErrorNote error={replay.error ?? list.error} />
      {list.isPending ? (
        <Loading />
      ) : (
        <>
          <DataTable
            rows={list.data?.data ?? []}
            columns={columns}
            caption="Webhook deliveries"
            empty="No webhook deliveries match"
          />
          <Pager
            page={page}
            pageSize={PAGE_SIZE}
            total={list.data?.pagination.total}
            onPage={(p) => set('page', String(p))}
          />
        </>
      )}
    </Page>
  );
}

export function WebhooksPage() {
  return (
    <ManagersOnly title="Webhook deliveries" refusal="Only owners and admins see webhook deliveries.">
      <WebhookDeliveries />
    </ManagersOnly>
  );
}
