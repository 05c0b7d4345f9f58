import './settings.css';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { invoke } from '../../lib/api';
import { date } from '../../lib/format';
import { ErrorNote } from '../../ui/ErrorNote';
import { Page } from '../../ui/Page';
import { PagedTable } from '../../ui/PagedTable';
import { ConfirmButton } from './Confirm';
import { ConnectAccountForm } from './ConnectAccountForm';
import { type ListEnvelope, PAGE_SIZE, pageQuery } from './list';
import { ManagersOnly } from './ManagersOnly';
import { connectOptions } from './meta-sign-in';
import { ShopifyInstall } from './ShopifyInstall';
import { SignInButtons } from './SignInButtons';

type Account = {
  id: string;
  provider: string;
  external_id: string;
  name: string | null;
  status: 'connected' | 'needs_reconnect' | 'disconnected';
  has_webhook_secret: boolean;
  created_at: string;
  disconnected_at: string | null;
};

const PROVIDER_NAMES: Record<string, string> = {
  whatsapp: 'WhatsApp',
  facebook: 'Facebook',
  instagram: 'Instagram',
  shopify: 'Shopify',
};

const STATUS_NAMES: Record<Account['status'], string> = {
  connected: 'Connected',
  needs_reconnect: 'Needs reconnect',
  disconnected: 'Disconnected',
};

function Disconnect({ account }: { account: Account }) {
  const queries = useQueryClient();
  const act = useMutation({
    mutationFn: () => invoke('connected-accounts', { method: 'DELETE', body: { id: account.id } }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['connected-accounts'] }),
  });
  if (account.status === 'disconnected') return <span>Disconnected {date(account.disconnected_at)}</span>;
  const label = account.name ?? account.external_id;
  return (
    <>
      <ConfirmButton
        label="Disconnect"
        name={`Disconnect ${label}`}
        question={`Disconnect ${label}? Its conversations and messages stay.`}
        confirmLabel="Yes, disconnect"
        pending={act.isPending}
        onConfirm={() => act.mutate()}
      />
      <ErrorNote error={act.error} />
    </>
  );
}

const col = createColumnHelper<Account>();
const columns = [
  col.accessor('provider', { header: 'Provider', cell: (c) => PROVIDER_NAMES[c.getValue()] ?? c.getValue() }),
  col.accessor('name', { header: 'Name', cell: (c) => c.getValue() ?? '—' }),
  col.accessor('external_id', { header: 'Account id' }),
  col.accessor('status', {
    header: 'Status',
    cell: (c) => STATUS_NAMES[c.getValue()],
  }),
  col.accessor('has_webhook_secret', {
    header: 'Webhook secret',
    cell: (c) => (c.getValue() ? 'Set' : 'Not set'),
  }),
  col.accessor('created_at', { header: 'Connected', cell: (c) => date(c.getValue()) }),
  col.display({
    id: 'disconnect',
    header: 'Disconnect',
    cell: ({ row }) => <Disconnect account={row.original} />,
  }),
];

function ConnectedAccounts() {
  const [page, setPage] = useState(0);
  // Where no sign-in is configured, pasting a token is the only way: show its form open.
  const options = useQuery({ queryKey: ['connect-options'], queryFn: connectOptions });
  const signInWorks = Object.values(options.data ?? {}).some((o) => o.available);
  const list = useQuery({
    queryKey: ['connected-accounts', page],
    queryFn: () => invoke<ListEnvelope<Account>>('connected-accounts', { query: pageQuery(page) }),
    placeholderData: keepPreviousData,
  });
  return (
    <Page title="Connected accounts">
      <section className="panel" aria-labelledby="shopify-heading">
        <h2 id="shopify-heading">Install on Shopify</h2>
        <ShopifyInstall />
      </section>
      <section className="panel" aria-labelledby="connect-heading">
        <h2 id="connect-heading">Connect an account</h2>
        <SignInButtons />
        <details className="advanced" open={!signInWorks}>
          <summary>Paste an access token instead (advanced)</summary>
          <ConnectAccountForm />
        </details>
      </section>
      <section aria-labelledby="accounts-heading">
        <h2 id="accounts-heading">Accounts</h2>
        <PagedTable
          query={list}
          rows={list.data?.data}
          total={list.data?.pagination.total}
          columns={columns}
          caption="Connected accounts"
          empty="No accounts connected yet"
          page={page}
          pageSize={PAGE_SIZE}
          onPage={setPage}
        />
      </section>
    </Page>
  );
}

export function AccountsPage() {
  return (
    <ManagersOnly title="Connected accounts" refusal="Only owners and admins manage connected accounts.">
      <ConnectedAccounts />
    </ManagersOnly>
  );
}
