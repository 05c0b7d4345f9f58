// A deadline for a call to another service that counts the time the other side had, not the time
// this process was too busy to look. AbortSignal.timeout counts wall time from the call: when the
// event loop is busy (a worker publishing a burst, a receiver under load), the request may leave
// late and its answer may sit unread in the socket while the timer, which runs before I/O in the
// loop's turn, fires first: a fast answer is taken for a timeout, and the work waits a backoff for
// nothing (docs/performance.md, "Social calendar"). Here the deadline advances in ticks, a late
// tick counting at most two ticks' worth (the rest of its lateness was this process's own), and
// when it is reached the abort waits one turn, so an answer that arrived meanwhile is read first.
// A server that never answers still fails within the deadline plus whatever the loop adds.

export type FairDeadline = { signal: AbortSignal; clear(): void };

/** An AbortSignal that aborts (a TimeoutError) after `ms` of time the loop could have answered in. */
export function fairDeadline(ms: number): FairDeadline {
  const controller = new AbortController();
  const tick = Math.max(20, Math.min(250, ms / 20));
  let counted = 0;
  let last = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const step = () => {
    const now = performance.now();
    counted += Math.min(now - last, 2 * tick);
    last = now;
    if (counted >= ms) {
      timer = undefined;
      immediate = setImmediate(() =>
        controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
      );
      return;
    }
    timer = setTimeout(step, Math.min(tick, ms - counted));
    timer.unref();
  };
  timer = setTimeout(step, Math.min(tick, ms));
  timer.unref();
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
    },
  };
}
