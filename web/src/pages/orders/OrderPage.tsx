import { useQuery } from '@tanstack/react-query';
import { Link, useLocation, useParams } from 'react-router';
import { must } from '../../lib/api';
import { canManage } from '../../lib/claims';
import { dateTime, money, personName } from '../../lib/format';
import { useLive } from '../../lib/live';
import { useClaims } from '../../lib/session';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import { useActorName } from './actors';
import { DeleteOrder } from './DeleteOrder';
import { statusLabel } from './lifecycle';
import { OrderLines } from './OrderLines';
import { OrderMoves } from './OrderMoves';
import { FULL_COLUMNS, type FullOrder, originOf } from './order';
import './orders.css';

/** What the create form hands over: the service's warnings about lines it could not link. */
type Created = { warnings?: { message: string }[] };

export function OrderPage() {
  const id = useParams().id ?? '';
  const claims = useClaims();
  const created = (useLocation().state as Created | null)?.warnings;
  const actorName = useActorName();
  // A status moved elsewhere (a teammate, an agent, Shopify) shows here, with its history line.
  useLive(
    [
      { table: 'orders', filter: `id=eq.${id}` },
      { table: 'order_status_events', filter: `order_id=eq.${id}` },
    ],
    ['order', id],
  );
  const order = useQuery({
    queryKey: ['order', id],
    queryFn: async () =>
      must(
        await supabase
          .from('orders')
          .select(FULL_COLUMNS)
          .eq('id', id)
          .order('created_at', { referencedTable: 'order_status_events', ascending: true })
          .maybeSingle(),
      ) as unknown as FullOrder | null,
  });

  if (order.isPending) return <Loading />;
  const o = order.data;
  if (!o)
    return <ErrorNote error={order.error ?? new Error('There is no such order in this organization')} />;
  const c = o.contacts;
  return (
    <Page
      title={`Order ${o.order_number}`}
      actions={canManage(claims) ? <DeleteOrder id={o.id} number={o.order_number} /> : undefined}
    >
      <p className="meta">
        <span className={`badge status-${o.status}`}>{statusLabel(o.status)}</span> · created{' '}
        {dateTime(o.created_at)} · {originOf(o.source)}
      </p>
      {created && (
        <div role="status" className="panel">
          <p>Order {o.order_number} created. Each line’s inventory link is shown below.</p>
          {created.length > 0 && (
            <ul>
              {created.map((w) => (
                <li key={w.message}>{w.message}</li>
              ))}
            </ul>
          )}
        </div>
      )}
      <ErrorNote error={order.error} />
      <OrderMoves orderId={o.id} status={o.status} />
      <div className="order-grid">
        <section className="panel" aria-labelledby="order-contact">
          <h2 id="order-contact">Customer</h2>
          {c ? (
            <p>
              <Link to={`/app/contacts/${c.id}`}>{personName(c)}</Link>
              {c.email && <br />}
              {c.email}
              {c.phone && <br />}
              {c.phone}
            </p>
          ) : (
            <p>{o.customer_name ?? o.customer_email ?? 'No contact'}</p>
          )}
        </section>
        <section className="panel" aria-labelledby="order-shipping">
          <h2 id="order-shipping">Shipping</h2>
          {o.fulfillment === 'pickup' ? (
            <p>Picked up by the customer</p>
          ) : (
            <>
              <p className="pre-line">{o.shipping_address ?? '—'}</p>
              <p>Phone: {o.shipping_phone_number ?? '—'}</p>
            </>
          )}
        </section>
        <section className="panel" aria-labelledby="order-totals">
          <h2 id="order-totals">Totals</h2>
          <dl className="totals">
            <dt>Subtotal</dt>
            <dd>{money(o.subtotal, o.currency)}</dd>
            <dt>Discount</dt>
            <dd>−{money(o.discount_total, o.currency)}</dd>
            <dt>Shipping</dt>
            <dd>{money(o.shipping_total, o.currency)}</dd>
            <dt>Tax{o.taxes_included ? ' (included)' : ''}</dt>
            <dd>{money(o.tax_total, o.currency)}</dd>
            <dt className="grand">Total ({o.currency})</dt>
            <dd className="grand">{money(o.total, o.currency)}</dd>
          </dl>
        </section>
      </div>
      <section aria-labelledby="order-lines">
        <h2 id="order-lines">Lines</h2>
        <OrderLines lines={o.order_items} currency={o.currency} />
      </section>
      {o.notes && (
        <section aria-labelledby="order-notes">
          <h2 id="order-notes">Notes</h2>
          <p className="pre-line">{o.notes}</p>
        </section>
      )}
      <section aria-labelledby="order-history">
        <h2 id="order-history">Status history</h2>
        <ol className="plain">
          {o.order_status_events.map((e) => (
            <li key={e.id}>
              {e.from_status ? `${statusLabel(e.from_status)} → ` : 'Created as '}
              <strong>{statusLabel(e.to_status)}</strong> · {actorName(e.actor)} · {dateTime(e.created_at)}
              {e.note && <> · “{e.note}”</>}
            </li>
          ))}
        </ol>
      </section>
    </Page>
  );
}
