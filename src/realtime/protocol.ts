/**
 * The Phoenix channel frames `@supabase/realtime-js` sends and reads (docs/realtime.md): one JSON
 * text frame per message. Serializer 2.0.0 (the client's default) writes
 * `[join_ref, ref, topic, event, payload]`; 1.0.0 writes `{join_ref, ref, topic, event, payload}`.
 * A client's binary frame is a broadcast in 2.0.0's binary form (kind 3, "user broadcast push"),
 * decoded here into the same message. Takes raw frames in, gives plain messages out, and back.
 */

export type Vsn = '1.0.0' | '2.0.0';

export type Message = {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const refOf = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

/** A client's frame as a message; null for anything malformed (the socket is then closed). */
export function decode(data: Buffer | string, binary: boolean): Message | null {
  if (binary) return decodeBroadcastPush(typeof data === 'string' ? Buffer.from(data) : data);
  let raw: unknown;
  try {
    raw = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
  } catch {
    return null;
  }
  const [joinRef, ref, topic, event, payload] = Array.isArray(raw)
    ? raw
    : isObject(raw)
      ? [raw.join_ref, raw.ref, raw.topic, raw.event, raw.payload]
      : [];
  if (typeof topic !== 'string' || typeof event !== 'string') return null;
  return {
    joinRef: refOf(joinRef),
    ref: refOf(ref),
    topic,
    event,
    payload: isObject(payload) ? payload : {},
  };
}

/** A message as the client's serializer of `vsn` reads it. */
export function encode(vsn: Vsn, m: Message): string {
  return vsn === '1.0.0'
    ? JSON.stringify({ join_ref: m.joinRef, ref: m.ref, topic: m.topic, event: m.event, payload: m.payload })
    : JSON.stringify([m.joinRef, m.ref, m.topic, m.event, m.payload]);
}

/**
 * realtime-js's binary "user broadcast push": kind 3, then the byte lengths of join_ref, ref,
 * topic, user event and metadata, the payload's encoding (0 binary, 1 JSON), those fields, and the
 * payload. Only JSON payloads are taken (a binary one cannot travel in a NOTIFY as it is).
 */
function decodeBroadcastPush(b: Buffer): Message | null {
  if (b.length < 7 || b[0] !== 3) return null;
  const lengths = [b[1], b[2], b[3], b[4], b[5]] as number[];
  if (b[6] !== 1) return null;
  let at = 7;
  const [joinRef, ref, topic, event, meta] = lengths.map((n) => {
    const s = b.subarray(at, at + n).toString('utf8');
    at += n;
    return s;
  }) as [string, string, string, string, string];
  let payload: unknown;
  try {
    payload = JSON.parse(b.subarray(at).toString('utf8'));
    if (meta) JSON.parse(meta);
  } catch {
    return null;
  }
  return {
    joinRef: joinRef || null,
    ref: ref || null,
    topic,
    event: 'broadcast',
    payload: { type: 'broadcast', event, payload },
  };
}

/** The reply to a client's push (`phx_reply`), ok or error, on its topic and refs. */
export const reply = (
  to: Message,
  status: 'ok' | 'error',
  response: Record<string, unknown> = {},
): Message => ({
  joinRef: to.joinRef,
  ref: to.ref,
  topic: to.topic,
  event: 'phx_reply',
  payload: { status, response },
});
