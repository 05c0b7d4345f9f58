import { useQuery } from '@tanstack/react-query';
import { Link, useLocation, useParams } from 'react-router';
import { must } from '../../lib/api';
import { ago } from '../../lib/format';
import { useLive } from '../../lib/live';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading } from '../../ui/Page';
import { CHANNEL_LABEL, type Conversation } from './inbox';
import { ReplyBox } from './ReplyBox';
import { Thread } from './Thread';
import { Triage } from './Triage';
import './inbox.css';

type ContactBits = {
  first_name: string | null;
  last_name: string | null;
  company: string | null;
  phone: string | null;
  email: string | null;
};
type Row = Omit<Conversation, 'contact' | 'last_message'> & { contacts: ContactBits | null };

// The name the conversations list shows (src/domain/conversations.ts), so both pages agree.
const nameOf = (c: ContactBits | null) =>
  (c && ([c.first_name, c.last_name].filter(Boolean).join(' ') || c.company || c.phone || c.email)) ||
  'Unknown contact';

/**
 * One conversation: who, on which channel, its messages and the reply box; the inbox's second pane
 * (InboxPage.tsx), or the whole page on a phone, with the way back to the list.
 */
export function ConversationPage() {
  const id = useParams().id ?? '';
  const { search } = useLocation();
  const back = (
    <Link to={{ pathname: '/app/inbox', search }} className="inbox-back">
      All conversations
    </Link>
  );
  // Live too: a new inbound message moves last_inbound_at, which reopens the reply window.
  useLive([{ table: 'conversations', filter: `id=eq.${id}` }], ['inbox', 'conversation', id]);
  const conversation = useQuery({
    queryKey: ['inbox', 'conversation', id],
    queryFn: async () =>
      must(
        await supabase
          .from('conversations')
          .select(
            'id, account_id, contact_id, channel, status, last_message_at, last_inbound_at, unread_count, contacts(first_name, last_name, company, phone, email)',
          )
          .eq('id', id)
          .maybeSingle(),
      ) as Row | null,
  });

  if (conversation.isPending)
    return (
      <div className="inbox-thread-pane">
        <Loading />
      </div>
    );
  const c = conversation.data;
  if (!c)
    return (
      <section className="inbox-thread-pane" aria-label="Conversation">
        {back}
        <ErrorNote
          error={conversation.error ?? new Error('There is no such conversation in this organization')}
        />
      </section>
    );
  const full: Conversation = { ...c, contact: null, last_message: null };
  return (
    <section className="inbox-thread-pane" aria-labelledby="conversation-heading">
      <header className="inbox-thread-header">
        <h2 id="conversation-heading">{nameOf(c.contacts)}</h2>
        {back}
      </header>
      <p className="meta">
        <span className="badge">{CHANNEL_LABEL[c.channel]}</span> <span className="badge">{c.status}</span>
        {c.contacts?.phone && ` · ${c.contacts.phone}`} ·{' '}
        <Link to={`/app/contacts/${c.contact_id}`}>Contact details</Link>
        {c.last_inbound_at && ` · customer last wrote ${ago(c.last_inbound_at)}`}
      </p>
      <Triage id={c.id} status={c.status} unread={c.unread_count} />
      <ErrorNote error={conversation.error} />
      <Thread conversationId={c.id} />
      <ReplyBox conversation={full} />
    </section>
  );
}
