import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, Outlet, useLocation, useParams } from 'react-router';
import { invoke } from '../../lib/api';
import { ago, dateTime } from '../../lib/format';
import { useLive } from '../../lib/live';
import { useMediaQuery } from '../../lib/media-query';
import { useUrlFilters } from '../../lib/url-filters';
import { ErrorNote } from '../../ui/ErrorNote';
import { FilterSelect } from '../../ui/FilterSelect';
import { Loading, Page } from '../../ui/Page';
import { Pager } from '../../ui/Pager';
import { CHANNEL_LABEL, CHANNELS, type Conversation, type Envelope, STATUSES } from './inbox';
import './inbox.css';

const PAGE_SIZE = 25;

/**
 * Wide enough for the list beside a thread: the navigation takes 14rem, the list 22rem, and a
 * thread needs about 30rem for its bubbles and reply box (docs/decisions.md, "Inbox in two panes").
 */
export const TWO_PANES = '(min-width: 1024px)';

/**
 * The inbox: conversations, newest activity first, filtered by channel and status (kept in the
 * URL), and the open one (/app/inbox/{id}, the outlet). A desktop shows both side by side; a
 * phone shows the list, or the open conversation with a way back to it.
 */
export function InboxPage() {
  const open = useParams().id;
  const twoPanes = useMediaQuery(TWO_PANES);
  return (
    <Page title="Inbox">
      <div className={twoPanes ? 'inbox-panes' : undefined}>
        {(twoPanes || !open) && <ConversationsPane open={open} />}
        <Outlet />
      </div>
    </Page>
  );
}

/** The right-hand pane when no conversation is open (on a phone the list is the whole page). */
export function NoneOpen() {
  const twoPanes = useMediaQuery(TWO_PANES);
  if (!twoPanes) return null;
  return (
    <div className="inbox-thread-pane inbox-none">
      <p className="empty">Choose a conversation to read it and reply.</p>
    </div>
  );
}

function ConversationsPane({ open }: { open: string | undefined }) {
  const filters = useUrlFilters();
  const channel = filters.get('channel');
  const status = filters.get('status');
  const unread = filters.get('unread') === '1';
  const page = filters.page;

  // New messages move their conversation (last message, unread count): pushed, never polled.
  useLive([{ table: 'conversations' }], ['inbox', 'list']);
  const list = useQuery({
    queryKey: ['inbox', 'list', { channel, status, unread, page }],
    placeholderData: keepPreviousData,
    queryFn: () =>
      invoke<Envelope<Conversation>>('conversations', {
        query: {
          channel,
          status,
          unread_only: unread ? 'true' : undefined,
          page: page + 1,
          per_page: PAGE_SIZE,
        },
      }),
  });
  const { set } = filters;

  return (
    <section className="inbox-list-pane" aria-label="Conversations">
      <search className="filters">
        <FilterSelect
          label="Channel"
          value={channel}
          allLabel="All channels"
          options={CHANNELS}
          labelOf={(c) => CHANNEL_LABEL[c as keyof typeof CHANNEL_LABEL]}
          onChange={(v) => set('channel', v)}
        />
        <FilterSelect
          label="Status"
          value={status}
          allLabel="Any status"
          options={STATUSES}
          onChange={(v) => set('status', v)}
        />
        <label className="inbox-check">
          <input
            type="checkbox"
            checked={unread}
            onChange={(e) => set('unread', e.target.checked ? '1' : '')}
          />
          Unread only
        </label>
      </search>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : (
        <>
          <ConversationList rows={list.data?.data ?? []} open={open} />
          <Pager
            page={page}
            pageSize={PAGE_SIZE}
            total={list.data?.pagination.total}
            onPage={(p) => set('page', String(p))}
          />
        </>
      )}
    </section>
  );
}

function ConversationList({ rows, open }: { rows: Conversation[]; open: string | undefined }) {
  // The filters go along to the conversation and back: the list beside it stays the same.
  const { search } = useLocation();
  if (rows.length === 0)
    return (
      <p className="empty">
        No conversations match. They start when a customer writes to a connected account or you send them a
        message.
      </p>
    );
  return (
    <ul className="plain inbox-list">
      {rows.map((c) => (
        <li
          key={c.id}
          className={
            [c.unread_count > 0 ? 'unread' : '', c.id === open ? 'open' : ''].join(' ').trim() || undefined
          }
        >
          <div className="inbox-row">
            <Link
              to={{ pathname: `/app/inbox/${c.id}`, search }}
              className="inbox-name"
              aria-current={c.id === open ? 'page' : undefined}
            >
              {c.contact?.name ?? 'Unknown contact'}
            </Link>
            <span className="badge">{CHANNEL_LABEL[c.channel]}</span>
            <span className="badge">{c.status}</span>
            {c.unread_count > 0 && <span className="badge unread-count">{c.unread_count} unread</span>}
            <time
              className="meta inbox-time"
              dateTime={c.last_message_at}
              title={dateTime(c.last_message_at)}
            >
              {ago(c.last_message_at)}
            </time>
          </div>
          {c.last_message && (
            <p className="meta inbox-preview">
              {c.last_message.direction === 'out' ? 'You: ' : ''}
              {c.last_message.preview}
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}
