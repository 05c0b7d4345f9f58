import type pg from 'pg';

/**
 * Connections that read-only one-Sync batches (one-sync.ts) share instead of each taking a
 * pooled connection of its own: each batch is a whole implicit transaction ending at its own Sync,
 * so batches of different callers can follow each other on one pipelining connection, their
 * claims gone at each Sync. Batches queued on a busy lane are read by its backend in one go
 * instead of waking a backend per request: on a cached by-id read this cut both the service's and
 * PostgreSQL's CPU a request by about a third (docs/performance.md). Each batch is written as it is
 * sent; holding a lane corked until the event-loop turn ends, so a turn's batches share one
 * write, was measured and gained nothing (docs/performance.md, issue 28, stop 35). Writes keep a pooled connection each: a commit waits for its WAL flush,
 * and batches queued behind it would wait too.
 *
 * A batch goes to an idle lane, else to a new one while there are fewer than `size`, else to the
 * least busy lane with fewer than MAX_QUEUE batches that has finished one within STALL_MS. A lane
 * held up by a slow read takes nothing more, nor does a full one, and when every lane is like
 * that the caller takes a pooled connection, as without lanes: a slow read delays only what was
 * already queued behind it, and a burst beyond the lanes runs in parallel on the pool.
 *
 * One lane by default: a backend answers a cached by-id read in ~50 µs, about what one Node
 * process can send it, and on a 2-core host a second busy backend only competed for the cores
 * (p99 50–60 ms against 7–11 ms with one, docs/performance.md). Heavier reads on a database with
 * cores to spare gain from more (DATABASE_READ_CONNECTIONS).
 */
export type Lane = { client: pg.Client; inFlight: number; since: number };

export type ReadLanes = {
  /** A lane counted as busy with one more batch, or undefined: take a pooled connection. */
  take(): Lane | undefined;
  /** The batch is over; a lane whose connection broke is closed and replaced when next needed. */
  done(lane: Lane, broken?: Error): void;
  close(): Promise<void>;
  /** Lanes open, and batches sent on them that have not finished (metrics). */
  stats(): { open: number; inFlight: number };
};

/** How long a lane may go without finishing a batch before new batches avoid it. */
export const STALL_MS = 10;
/** The most batches one lane holds; ~1.5 ms of cached by-id reads, ~8 ms of lists of 25. */
export const MAX_QUEUE = 32;

export function readLanes(
  connect: () => pg.Client,
  size: number,
  now: () => number = () => performance.now(),
): ReadLanes {
  const lanes: Lane[] = [];
  const drop = (lane: Lane) => {
    const i = lanes.indexOf(lane);
    if (i < 0) return;
    lanes.splice(i, 1);
    lane.client.end().catch(() => {});
  };
  const open = (): Lane => {
    const lane: Lane = { client: connect(), inFlight: 0, since: 0 };
    // Batches sent before the connection is up wait in the driver's queue; if it never comes up,
    // they fail with its error and the lane is gone.
    lane.client.on('error', () => drop(lane));
    lane.client.on('end', () => drop(lane));
    lane.client.connect().catch(() => drop(lane));
    lanes.push(lane);
    return lane;
  };
  const busy = (lane: Lane, t: number) => {
    if (lane.inFlight++ === 0) lane.since = t;
    return lane;
  };
  return {
    take() {
      const t = now();
      let best: Lane | undefined;
      for (const lane of lanes) {
        if (lane.inFlight === 0) return busy(lane, t);
        if (lane.inFlight >= MAX_QUEUE || t - lane.since > STALL_MS) continue;
        if (!best || lane.inFlight < best.inFlight) best = lane;
      }
      if (lanes.length < size) return busy(open(), t);
      return best && busy(best, t);
    },
    done(lane, broken) {
      lane.inFlight--;
      lane.since = now();
      if (broken) drop(lane);
    },
    stats() {
      let inFlight = 0;
      for (const lane of lanes) inFlight += lane.inFlight;
      return { open: lanes.length, inFlight };
    },
    async close() {
      await Promise.all(lanes.splice(0).map((lane) => lane.client.end().catch(() => {})));
    },
  };
}
