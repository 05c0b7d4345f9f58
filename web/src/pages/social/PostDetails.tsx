import { useQuery } from '@tanstack/react-query';
import { useClaims } from '../../lib/session';
import { ErrorNote } from '../../ui/ErrorNote';
import { PostMedia } from './PostMedia';
import { type Account, accountLabel, latestMetrics, PLATFORM_LABEL, type Post, STATUS_LABEL } from './post';
import { longDateTime } from './time';

// Meta's metric names (docs/social.md "Analytics") in words; others show as named.
const METRIC_LABEL: Record<string, string> = {
  post_media_view: 'Views',
  post_total_media_view_unique: 'Viewers',
  post_reactions_by_type_total: 'Reactions',
  post_clicks: 'Clicks',
  views: 'Views',
  reach: 'Reach',
  likes: 'Likes',
  comments: 'Comments',
  shares: 'Shares',
  saved: 'Saves',
};

const metricLabel = (name: string) => {
  const [base = name, kind] = name.split('.');
  return kind ? `${METRIC_LABEL[base] ?? base}: ${kind}` : (METRIC_LABEL[name] ?? name);
};

const author = (createdBy: string | null, me: string) =>
  createdBy === `user:${me}`
    ? 'You'
    : createdBy?.startsWith('agent:')
      ? 'An agent (MCP)'
      : createdBy?.startsWith('user:')
        ? 'Someone in the organization'
        : '—';

export function StatusBadge({ status }: { status: Post['status'] }) {
  return <span className={`badge status-${status}`}>{STATUS_LABEL[status]}</span>;
}

export function PostDetails({ post: p, accounts }: { post: Post; accounts: Account[] }) {
  const me = useClaims().userId;
  const account = accounts.find((a) => a.id === p.account_id);
  const metrics = useQuery({
    queryKey: ['social', 'metrics', p.id],
    queryFn: () => latestMetrics(p.id),
    enabled: p.status === 'published',
  });
  const error = p.error as { message?: string; code?: number | string } | null;
  return (
    <>
      <dl className="post-facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={p.status} />
        </dd>
        <dt>Platform</dt>
        <dd>{PLATFORM_LABEL[p.platform] ?? p.platform}</dd>
        <dt>Account</dt>
        <dd>{account ? accountLabel(account) : '—'}</dd>
        <dt>{p.published_at ? 'Published' : 'Scheduled for'}</dt>
        <dd>
          {p.published_at
            ? longDateTime(p.published_at)
            : p.scheduled_at
              ? longDateTime(p.scheduled_at)
              : 'Not scheduled'}
        </dd>
        <dt>Created by</dt>
        <dd>{author(p.created_by, me)}</dd>
        <dt>Link</dt>
        <dd>{p.link ? <a href={p.link}>{p.link}</a> : '—'}</dd>
      </dl>
      {p.status === 'failed' && (
        <section className="panel failure" aria-label="Why it failed">
          <h2>Publishing failed</h2>
          <p>{error?.message ?? 'Meta gave no reason.'}</p>
          {error?.code !== undefined && <p className="hint">Meta’s error code {String(error.code)}</p>}
        </section>
      )}
      {p.status === 'published' && (
        <section aria-label="On the platform">
          <h2>On {PLATFORM_LABEL[p.platform] ?? p.platform}</h2>
          {p.permalink ? (
            <a href={p.permalink}>See the post on {PLATFORM_LABEL[p.platform] ?? p.platform}</a>
          ) : (
            <p className="hint">Meta gave no link for it yet.</p>
          )}
          <ErrorNote error={metrics.error} />
          {metrics.data && metrics.data.length > 0 ? (
            <dl className="metrics">
              {metrics.data.map(([name, value]) => (
                <div key={name}>
                  <dt>{metricLabel(name)}</dt>
                  <dd>{value.toLocaleString()}</dd>
                </div>
              ))}
            </dl>
          ) : (
            metrics.data && <p className="hint">No figures yet: Meta reports them within a few hours.</p>
          )}
        </section>
      )}
      <h2>Text</h2>
      <p className="post-text">{p.message ?? '—'}</p>
      <h2>Media</h2>
      <PostMedia media={p.media} />
    </>
  );
}
