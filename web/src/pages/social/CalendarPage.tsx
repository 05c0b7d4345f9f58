import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ApiError } from '../../lib/api';
import { canManage } from '../../lib/claims';
import { useLive } from '../../lib/live';
import { useClaims } from '../../lib/session';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import { CalendarGrid } from './CalendarGrid';
import { DraftsList } from './DraftsList';
import { MoveForm } from './MoveForm';
import { calendarAt, calendarPosts, PLATFORM_LABEL, type Post, STATUS_LABEL, STATUSES } from './post';
import { useMovePost } from './save';
import { useThumbnails } from './thumbnails';
import {
  anchorOf,
  dayKey,
  inZone,
  longDateTime,
  onDay,
  step,
  timeZone,
  type View,
  viewRange,
  viewTitle,
} from './time';
import './social.css';

/** The one way to connect, for those who may; the others are told who can. */
function ConnectFirst() {
  const claims = useClaims();
  return (
    <div className="panel connect-first" role="status">
      <p>Connect a Facebook Page or an Instagram account to schedule posts on this calendar.</p>
      {canManage(claims) ? (
        <Link className="button primary" to="/app/accounts">
          Connect an account
        </Link>
      ) : (
        <p className="hint">An owner or admin of the organization can connect one.</p>
      )}
    </div>
  );
}

/** A free organization: what brings the calendar, said to the person who can act on it. */
function PlanFirst() {
  const claims = useClaims();
  return (
    <div className="panel connect-first" role="status">
      <p>The social calendar comes with the paid plans, from Starter up.</p>
      {claims.role === 'owner' ? (
        <Link className="button primary" to="/app">
          See the plans
        </Link>
      ) : (
        <p className="hint">The organization’s owner can change the plan.</p>
      )}
    </div>
  );
}

/** The social calendar: a month or a week of the person's zone, the view and day in the URL. */
export function CalendarPage() {
  const [params, setParams] = useSearchParams();
  const view: View = params.get('view') === 'week' ? 'week' : 'month';
  const anchor = anchorOf(params.get('day'));
  const { days, from, to } = viewRange(view, anchor);
  const tz = timeZone();
  // Posts scheduled, published or failed (by the worker, a teammate, an agent) show as they happen.
  useLive([{ table: 'social_posts' }], ['social']);
  const calendar = useQuery({
    queryKey: ['social', 'calendar', from, to, tz],
    queryFn: () => calendarPosts(from, to, tz),
    placeholderData: keepPreviousData,
  });
  const move = useMovePost();
  const [moving, setMoving] = useState<Post | null>(null);
  const [moved, setMoved] = useState('');
  // A post on its way to another day shows there at once; a refusal puts it back.
  const going = move.isPending ? move.variables : undefined;
  const byDay = useMemo(() => {
    const map = new Map<string, Post[]>();
    for (const entry of calendar.data ?? []) {
      const to = going?.post.id === entry.post.id ? going.at : null;
      const post = to ? { ...entry.post, scheduled_at: to } : entry.post;
      const day = to ? dayKey(inZone(to)) : entry.day;
      map.set(day, [...(map.get(day) ?? []), post]);
    }
    for (const list of map.values())
      list.sort((a, b) => Date.parse(calendarAt(a) ?? '') - Date.parse(calendarAt(b) ?? ''));
    return map;
  }, [calendar.data, going]);
  const thumbs = useThumbnails((calendar.data ?? []).map((e) => e.post));
  const moveTo = (post: Post, at: string) => {
    setMoved('');
    move.mutate(
      { post, at },
      {
        onSuccess: (after) => {
          setMoving(null);
          setMoved(`Moved to ${longDateTime(after.scheduled_at)}.`);
          // The post is drawn again on its new day: focus goes to its Move button there.
          setTimeout(() => document.querySelector<HTMLElement>(`[data-move-post="${post.id}"]`)?.focus());
        },
      },
    );
  };
  const dropOn = (id: string, day: string) => {
    const post = calendar.data?.find((e) => e.post.id === id)?.post;
    if (!post?.scheduled_at) return;
    const at = onDay(post.scheduled_at, day);
    if (at !== new Date(post.scheduled_at).toISOString()) moveTo(post, at);
  };
  const go = (next: { view?: View; day?: string }) => {
    const p = new URLSearchParams(params);
    if (next.view) p.set('view', next.view);
    if (next.day) p.set('day', next.day);
    setParams(p, { replace: true });
  };
  // Without a connected account the calendar is still the page, empty, with one way to connect.
  const unconnected =
    calendar.error instanceof ApiError && calendar.error.details?.reason === 'no_connected_account';
  const needsPlan = calendar.error instanceof ApiError && calendar.error.code === 'plan_required';
  // Free organizations are refused with plan_required (the calendar is a paid feature): that
  // message is the page, and the drafts beside it would only repeat it.
  const refused = calendar.error !== null && !calendar.data && !unconnected;

  return (
    <Page
      title="Social calendar"
      actions={
        unconnected ? undefined : (
          <Link className="button primary" to="/app/social/new">
            New post
          </Link>
        )
      }
    >
      <div className="calendar-bar">
        <h2>{viewTitle(view, anchor)}</h2>
        <div className="actions">
          <button type="button" onClick={() => go({ day: dayKey(step(view, anchor, -1)) })}>
            Previous
          </button>
          <button type="button" onClick={() => go({ day: dayKey(anchorOf(null)) })}>
            Today
          </button>
          <button type="button" onClick={() => go({ day: dayKey(step(view, anchor, 1)) })}>
            Next
          </button>
        </div>
        <div className="actions">
          <button type="button" aria-pressed={view === 'month'} onClick={() => go({ view: 'month' })}>
            Month
          </button>
          <button type="button" aria-pressed={view === 'week'} onClick={() => go({ view: 'week' })}>
            Week
          </button>
        </div>
      </div>
      <p className="hint">
        Times in {tz}.{' '}
        <span className="legend">
          {STATUSES.map((s) => (
            <span key={s} className={`badge status-${s}`}>
              {STATUS_LABEL[s]}
            </span>
          ))}{' '}
          {['facebook', 'instagram'].map((p) => (
            <span key={p} className={`badge platform-${p}`}>
              {PLATFORM_LABEL[p]}
            </span>
          ))}
        </span>
      </p>
      {unconnected ? <ConnectFirst /> : needsPlan ? <PlanFirst /> : <ErrorNote error={calendar.error} />}
      <p className="visually-hidden" role="status">
        {moved}
      </p>
      <ErrorNote error={move.error} labels={{ scheduled_at: 'New day and time' }} />
      {moving && (
        <MoveForm
          post={moving}
          pending={move.isPending}
          onMove={(at) => moveTo(moving, at)}
          onClose={() => {
            setMoving(null);
            move.reset();
          }}
        />
      )}
      <div className="social-layout">
        <section aria-label="Calendar">
          {calendar.isPending ? (
            <Loading />
          ) : (
            !refused && (
              <CalendarGrid
                view={view}
                anchor={anchor}
                days={days}
                posts={byDay}
                thumbs={thumbs}
                onMove={(p) => {
                  move.reset();
                  setMoving(p);
                }}
                onDrop={dropOn}
              />
            )
          )}
        </section>
        {!refused && !unconnected && <DraftsList />}
      </div>
    </Page>
  );
}
