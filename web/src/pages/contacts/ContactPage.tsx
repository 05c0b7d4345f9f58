import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { must } from '../../lib/api';
import { ago, date, money, personName } from '../../lib/format';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import { ContactForm } from './ContactForm';
import { CONTACT_COLUMNS, type Contact, type ContactInput, toForm, toRow } from './contact';

type OrderRow = {
  id: string;
  order_number: string;
  status: string;
  total: string;
  currency: string;
  created_at: string;
};
type ConversationRow = { id: string; channel: string; status: string; last_message_at: string | null };

export function ContactPage() {
  const id = useParams().id ?? '';
  const queries = useQueryClient();
  const contact = useQuery({
    queryKey: ['contact', id],
    queryFn: async () =>
      must(
        await supabase.from('contacts').select(CONTACT_COLUMNS).eq('id', id).maybeSingle(),
      ) as Contact | null,
  });
  const orders = useQuery({
    queryKey: ['contact', id, 'orders'],
    queryFn: async () =>
      must(
        await supabase
          .from('orders')
          .select('id, order_number, status, total, currency, created_at')
          .eq('contact_id', id)
          .order('created_at', { ascending: false })
          .limit(25),
      ) as OrderRow[],
  });
  const conversations = useQuery({
    queryKey: ['contact', id, 'conversations'],
    queryFn: async () =>
      must(
        await supabase
          .from('conversations')
          .select('id, channel, status, last_message_at')
          .eq('contact_id', id)
          .order('last_message_at', { ascending: false, nullsFirst: false })
          .limit(25),
      ) as ConversationRow[],
  });
  const save = useMutation({
    mutationFn: async (f: ContactInput) =>
      must(await supabase.from('contacts').update(toRow(f)).eq('id', id).select('id').single()),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['contact', id] }),
  });

  if (contact.isPending) return <Loading />;
  if (!contact.data)
    return <ErrorNote error={contact.error ?? new Error('There is no such contact in this organization')} />;
  return (
    <Page title={personName(contact.data)}>
      <p className="meta">
        Source {contact.data.source} · added {date(contact.data.created_at)}
      </p>
      <section className="panel" aria-label="Details">
        <ContactForm
          key={contact.data.id}
          initial={toForm(contact.data)}
          submitLabel="Save changes"
          pending={save.isPending}
          error={save.error}
          onSubmit={(f) => save.mutate(f)}
        />
        {save.isSuccess && <p role="status">Saved.</p>}
      </section>
      <section aria-labelledby="contact-orders">
        <h2 id="contact-orders">Orders</h2>
        <ErrorNote error={orders.error} />
        {orders.data?.length ? (
          <ul className="plain">
            {orders.data.map((o) => (
              <li key={o.id}>
                <Link to={`/app/orders/${o.id}`}>{o.order_number}</Link> · {o.status} ·{' '}
                {money(o.total, o.currency)} · {date(o.created_at)}
              </li>
            ))}
          </ul>
        ) : (
          <p className="empty">No orders yet</p>
        )}
      </section>
      <section aria-labelledby="contact-conversations">
        <h2 id="contact-conversations">Conversations</h2>
        <ErrorNote error={conversations.error} />
        {conversations.data?.length ? (
          <ul className="plain">
            {conversations.data.map((c) => (
              <li key={c.id}>
                <Link to={`/app/inbox/${c.id}`}>{c.channel}</Link> · {c.status} · last message{' '}
                {ago(c.last_message_at)}
              </li>
            ))}
          </ul>
        ) : (
          <p className="empty">No conversations yet</p>
        )}
      </section>
    </Page>
  );
}
