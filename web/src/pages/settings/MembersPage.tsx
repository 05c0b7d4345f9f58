import './settings.css';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createColumnHelper } from '@tanstack/react-table';
import { useMemo, useState } from 'react';
import { canManage } from '../../lib/claims';
import { date } from '../../lib/format';
import { useClaims } from '../../lib/session';
import { DataTable } from '../../ui/DataTable';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import { Pager } from '../../ui/Pager';
import { ConfirmButton } from './Confirm';
import { InviteForm } from './InviteForm';
import { PAGE_SIZE } from './list';
import { type Member, type OrgInvitation, removeMember, roster, withdrawInvitation } from './members';
import { OrganizationCountry } from './OrganizationCountry';
import { RolePicker } from './RolePicker';

/** One removal or withdrawal, with its own error beside its button. */
function RemoveButton(props: {
  label: string;
  name: string;
  question: string;
  confirmLabel: string;
  run(): Promise<unknown>;
}) {
  const queries = useQueryClient();
  const act = useMutation({
    mutationFn: props.run,
    onSuccess: () => queries.invalidateQueries({ queryKey: ['roster'] }),
  });
  return (
    <>
      <ConfirmButton {...props} pending={act.isPending} onConfirm={() => act.mutate()} />
      <ErrorNote error={act.error} />
    </>
  );
}

const memberCol = createColumnHelper<Member>();
const inviteCol = createColumnHelper<OrgInvitation>();

export function MembersPage() {
  const claims = useClaims();
  const manager = canManage(claims);
  const [page, setPage] = useState(0);
  // The service sends every open invitation at once; the page shows them a screenful at a time.
  const [invitePage, setInvitePage] = useState(0);
  const list = useQuery({
    queryKey: ['roster', page],
    queryFn: () => roster(page),
    placeholderData: keepPreviousData,
  });
  const memberColumns = useMemo(() => {
    const cols = [
      memberCol.accessor('email', {
        header: 'Email',
        cell: (c) => (c.row.original.user_id === claims.userId ? `${c.getValue()} (you)` : c.getValue()),
      }),
      memberCol.accessor('role', {
        header: 'Role',
        cell: (c) =>
          manager ? <RolePicker member={c.row.original} isOwner={claims.role === 'owner'} /> : c.getValue(),
      }),
      memberCol.accessor('created_at', { header: 'Joined', cell: (c) => date(c.getValue()) }),
    ];
    if (!manager) return cols;
    return [
      ...cols,
      memberCol.display({
        id: 'remove',
        header: 'Remove',
        cell: ({ row: { original: m } }) => (
          <RemoveButton
            label="Remove"
            name={`Remove ${m.email}`}
            question={`Remove ${m.email} from the organization?`}
            confirmLabel="Yes, remove"
            run={() => removeMember(m.user_id)}
          />
        ),
      }),
    ];
  }, [manager, claims.userId, claims.role]);
  const inviteColumns = [
    inviteCol.accessor('email', { header: 'Email' }),
    inviteCol.accessor('role', { header: 'Role' }),
    inviteCol.accessor('expires_at', {
      header: 'Expires',
      cell: (c) => (c.row.original.status === 'expired' ? 'Expired' : date(c.getValue())),
    }),
    inviteCol.display({
      id: 'withdraw',
      header: 'Withdraw',
      cell: ({ row: { original: i } }) => (
        <RemoveButton
          label="Withdraw"
          name={`Withdraw invitation to ${i.email}`}
          question={`Withdraw the invitation to ${i.email}?`}
          confirmLabel="Yes, withdraw"
          run={() => withdrawInvitation(i.id)}
        />
      ),
    }),
  ];

  return (
    <Page title="Members">
      {manager ? (
        <>
          <section className="panel" aria-labelledby="invite-heading">
            <h2 id="invite-heading">Invite someone</h2>
            <InviteForm isOwner={claims.role === 'owner'} />
          </section>
          {claims.organizationId && <OrganizationCountry organizationId={claims.organizationId} />}
        </>
      ) : (
        <p className="hint">Owners and admins invite members, change roles and remove members.</p>
      )}
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : (
        <>
          <section aria-labelledby="roster-heading">
            <h2 id="roster-heading">People</h2>
            <DataTable rows={list.data?.data ?? []} columns={memberColumns} caption="Members" />
            <Pager page={page} pageSize={PAGE_SIZE} total={list.data?.pagination.total} onPage={setPage} />
          </section>
          {manager && (
            <section aria-labelledby="pending-heading">
              <h2 id="pending-heading">Pending invitations</h2>
              <DataTable
                rows={(list.data?.invitations ?? []).slice(
                  invitePage * PAGE_SIZE,
                  (invitePage + 1) * PAGE_SIZE,
                )}
                columns={inviteColumns}
                caption="Pending invitations"
                empty="No invitations waiting"
              />
              <Pager
                page={invitePage}
                pageSize={PAGE_SIZE}
                total={list.data?.invitations?.length ?? 0}
                onPage={setInvitePage}
              />
            </section>
          )}
        </>
      )}
    </Page>
  );
}
