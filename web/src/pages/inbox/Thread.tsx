import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { invoke } from '../../lib/api';
import { dateTime } from '../../lib/format';
import { useLive } from '../../lib/live';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading } from '../../ui/Page';
import { type Envelope, failureReason, type Message, summaryOf } from './inbox';

const PAGE_SIZE = 50;

/**
 * A conversation's messages, oldest at the top. The service pages newest first, so page 1 is
 * the latest messages (what people open a thread for); older pages are a button away.
 */
export function Thread({ conversationId }: { conversationId: string }) {
  const [page, setPage] = useState(1);
  // Inbound messages and delivery statuses (written by the worker) are pushed.
  useLive(
    [{ table: 'messages', filter: `conversation_id=eq.${conversationId}` }],
    ['inbox', 'messages', conversationId],
  );
  const messages = useQuery({
    queryKey: ['inbox', 'messages', conversationId, page],
    placeholderData: keepPreviousData,
    queryFn: () =>
      invoke<Envelope<Message>>(`conversations/${conversationId}/messages`, {
        query: { page, per_page: PAGE_SIZE },
      }),
  });
  if (messages.isPending) return <Loading />;
  if (!messages.data) return <ErrorNote error={messages.error} />;
  const { data, pagination } = messages.data;
  const ordered = inOrder(data);
  return (
    <section aria-labelledby="thread-heading" className="thread">
      <h3 id="thread-heading" className="visually-hidden">
        Messages
      </h3>
      <ErrorNote error={messages.error} />
      {page < pagination.total_pages && (
        <button type="button" className="link" onClick={() => setPage(page + 1)}>
          Older messages
        </button>
      )}
      {ordered.length === 0 ? (
        <p className="empty">No messages yet.</p>
      ) : (
        <ol className="plain thread-list">
          {ordered.map((m) => (
            <MessageItem key={m.id} m={m} />
          ))}
        </ol>
      )}
      {page > 1 && (
        <button type="button" className="link" onClick={() => setPage(page - 1)}>
          Newer messages
        </button>
      )}
    </section>
  );
}

const at = (m: Message) => m.received_at ?? m.created_at;

/**
 * Oldest first, by when each was written. The service pages by `created_at`, which is the same
 * for all messages one webhook delivery carried; the customer's own timestamp orders those
 * (a stable sort keeps the service's order for ties).
 */
const inOrder = (newestFirst: Message[]) =>
  [...newestFirst].reverse().sort((a, b) => Date.parse(at(a)) - Date.parse(at(b)));

function MessageItem({ m }: { m: Message }) {
  const when = at(m);
  const inbound = m.direction === 'in';
  return (
    <li className={`bubble ${inbound ? 'in' : 'out'}`}>
      <p className="visually-hidden">{inbound ? 'The customer wrote:' : 'You wrote:'}</p>
      <p className="bubble-body">{summaryOf(m)}</p>
      {m.media_url && (
        <a href={m.media_url} target="_blank" rel="noreferrer">
          Open the {m.type}
        </a>
      )}
      <p className="bubble-meta">
        <time dateTime={when}>{dateTime(when)}</time>
        {m.sent_by_agent_key_id && ' · by an agent'}
        {!inbound && <StatusTicks m={m} />}
      </p>
    </li>
  );
}

const TICKS: Record<string, { mark: string; label: string }> = {
  queued: { mark: '🕓', label: 'Queued' },
  sent: { mark: '✓', label: 'Sent' },
  delivered: { mark: '✓✓', label: 'Delivered' },
  read: { mark: '✓✓', label: 'Read' },
  failed: { mark: '✕', label: 'Failed' },
};

/** Delivery status of an outbound message: the ticks people know, and the word beside them. */
function StatusTicks({ m }: { m: Message }) {
  const tick = TICKS[m.status] ?? { mark: '', label: m.status };
  // A queued message with an error is being retried by the worker: say so, with Meta's words.
  const note =
    m.status === 'failed'
      ? `: ${failureReason(m.error)}`
      : m.status === 'queued' && m.error
        ? ` (retrying: ${failureReason(m.error)})`
        : '';
  return (
    <span className={`ticks ${m.status}`}>
      {' · '}
      <span aria-hidden="true">{tick.mark} </span>
      {tick.label}
      {note}
    </span>
  );
}
