// Shared by the send tests (test/conversations/send-*.test.ts): a customer who wrote in on a
// channel (which opens the messaging window), and a wait for an outcome the worker brings about.
import { call, type Session } from './http.ts';
import type { TestService } from './service.ts';

const IDENTITY = { whatsapp: 'whatsapp_id', messenger: 'facebook_psid', instagram: 'instagram_id' } as const;

/**
 * An inbound message from the customer `id` (wa_id, PSID or IGSID) `hoursAgo` hours ago on the
 * connected account, written on the service path as the webhook receiver will write it.
 */
export async function inbound(
  svc: TestService,
  channel: keyof typeof IDENTITY,
  org: string,
  account: string,
  id: string,
  hoursAgo: number,
) {
  const column = IDENTITY[channel];
  const [c] = await svc.services.db.query<{ id: string }>(
    `insert into contacts (organization_id, ${column}, first_name) values ($1, $2, 'Ana')
     on conflict (organization_id, ${column}) do update set first_name = 'Ana' returning id`,
    [org, id],
  );
  const [v] = await svc.services.db.query<{ id: string }>(
    'select id from app.open_conversation($1, $2, $3)',
    [org, account, c?.id],
  );
  await svc.services.db.query(
    `insert into messages (organization_id, conversation_id, account_id, direction, type, body, status, received_at)
     values ($1, $2, $3, 'in', 'text', 'hi', 'received', now() - make_interval(hours => $4))`,
    [org, v?.id, account, hoursAgo],
  );
  return { contactId: c?.id as string, conversationId: v?.id as string };
}

/** Polls `check` until it returns a value (not undefined/null/false), or throws after `ms`. */
export async function eventually<T>(check: () => Promise<T> | T, ms = 60_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error('timed out waiting for the outcome');
    await new Promise((r) => setTimeout(r, 100));
  }
}

export type MessageState = {
  status: string;
  error: Record<string, unknown> | null;
  provider_message_id: string | null;
};

/** A message's status, error and provider id, read on the service path. */
export async function messageState(svc: TestService, id: string): Promise<MessageState | undefined> {
  const [m] = await svc.services.db.query<MessageState>(
    'select status, error, provider_message_id from messages where id = $1',
    [id],
  );
  return m;
}

/** Connects a messaging account for the session's organization (owners and admins); its JSON. */
export async function connect(
  svc: TestService,
  session: Session,
  provider: 'whatsapp' | 'facebook' | 'instagram',
  externalId: string,
  accessToken: string,
) {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: session.access_token,
    body: { provider, external_id: externalId, access_token: accessToken },
  });
  if (r.status !== 201) throw new Error(`connecting failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json as { id: string } & Record<string, unknown>;
}
