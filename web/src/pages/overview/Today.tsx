import { useQuery } from '@tanstack/react-query';
import { startOfDay } from 'date-fns';
import { Link } from 'react-router';
import { must } from '../../lib/api';
import { dateTime } from '../../lib/format';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';

type Post = { id: string; platform: string; message: string | null; scheduled_at: string };

/** Orders since the person's own midnight (not UTC's). */
async function ordersToday() {
  const res = await supabase
    .from('orders')
    .select('id', { count: 'exact' })
    .gte('created_at', startOfDay(new Date()).toISOString())
    .range(0, 0);
  must(res);
  return res.count ?? 0;
}

/** Unread messages across open threads: the sum of the conversations' unread counts. */
async function unread() {
  const rows = must(
    await supabase.from('conversations').select('unread_count').gt('unread_count', 0).range(0, 999),
  ) as { unread_count: number }[];
  return { messages: rows.reduce((n, r) => n + r.unread_count, 0), conversations: rows.length };
}

const nextPosts = async () =>
  must(
    await supabase
      .from('social_posts')
      .select('id, platform, message, scheduled_at')
      .eq('status', 'scheduled')
      .order('scheduled_at')
      .limit(5),
  ) as Post[];

export function Today() {
  const orders = useQuery({ queryKey: ['overview', 'orders-today'], queryFn: ordersToday });
  const inbox = useQuery({ queryKey: ['overview', 'unread'], queryFn: unread });
  const posts = useQuery({ queryKey: ['overview', 'next-posts'], queryFn: nextPosts });
  return (
    <div className="overview-today">
      <section className="panel" aria-labelledby="orders-today">
        <h2 id="orders-today">Orders today</h2>
        <ErrorNote error={orders.error} />
        <p className="figure">{orders.data ?? '…'}</p>
        <Link to="/app/orders">All orders</Link>
      </section>
      <section className="panel" aria-labelledby="unread">
        <h2 id="unread">Unread messages</h2>
        <ErrorNote error={inbox.error} />
        <p className="figure">{inbox.data?.messages ?? '…'}</p>
        {inbox.data && (
          <p className="hint">
            in {inbox.data.conversations} conversation{inbox.data.conversations === 1 ? '' : 's'}
          </p>
        )}
        <Link to="/app/inbox">Open the inbox</Link>
      </section>
      <section className="panel" aria-labelledby="next-posts">
        <h2 id="next-posts">Next scheduled posts</h2>
        <ErrorNote error={posts.error} />
        {posts.data?.length ? (
          <ul className="plain">
            {posts.data.map((p) => (
              <li key={p.id}>
                {dateTime(p.scheduled_at)} · {p.platform} · {(p.message ?? '').slice(0, 80) || 'No text'}
              </li>
            ))}
          </ul>
        ) : (
          posts.data && <p className="empty">Nothing scheduled</p>
        )}
        <Link to="/app/social">Social calendar</Link>
      </section>
    </div>
  );
}
