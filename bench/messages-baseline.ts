// The bare baseline bench/messages.ts holds the service's sends against, in a process of its own:
// node:http, jose and node-postgres, no framework. Per request it does the durable work of a send
// and nothing else: verifies the bearer JWT (ES256, each token's signature checked once and
// remembered, as the service does), inserts the message and its pg-boss job in one transaction
// (`begin`, both inserts and `commit` in one socket write on a pipelining connection), calls the
// fake Graph API, and records the answer (the message `sent`, its job completed, in one
// statement); then answers 201 with the message. The conversation is the one the service opened
// (no recipient lookup, no plan or window check); the table's triggers run as for the service.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createLocalJWKSet, jwtVerify } from 'jose';
import pg from 'pg';
import { serveBare } from './child.ts';
import { GRAPH_TOKEN, PHONE_ID, type SendsInfo } from './messages-fixture.ts';

const env = process.env;
const info = JSON.parse(env.BENCH_SENDS_INFO ?? '{}') as SendsInfo;
const graph = `${env.META_GRAPH_URL}/v26.0/${PHONE_ID}/messages`;
const jwks = createLocalJWKSet(info.jwks as Parameters<typeof createLocalJWKSet>[0]);
const verified = new Map<string, string>(); // token → sub

const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 16, pipeline: true } as pg.PoolConfig);

const INSERT_MESSAGE = `insert into public.messages (organization_id, id, conversation_id, account_id, direction, type,
    template, status, queued_at, sent_by_user_id)
  values ($1, $2, $3, $4, 'out', 'template', $5, 'queued', now(), $6) returning id`;
const RECORD = `with j as (update pgboss.job set state = 'completed', completed_on = now()
                 where name = 'send-message' and id = $4)
  update public.messages m set status = 'sent', sent_at = now(), provider_message_id = $3, sending_until = null
   where m.organization_id = $1 and m.id = $2 returning to_jsonb(m) as r`;

type Corkable = { cork(): void; uncork(): void };

async function queue(sub: string, template: object) {
  const id = randomUUID();
  const jobId = randomUUID();
  const job = { ...info.jobInsert.record, id: jobId, data: { organization_id: info.org, message_id: id } };
  const client = await pool.connect();
  try {
    const stream = (client as unknown as { connection: { stream: Corkable } }).connection.stream;
    stream.cork();
    const sent = [
      client.query('begin'),
      client.query({
        name: 'b_msg',
        text: INSERT_MESSAGE,
        values: [info.org, id, info.conversationId, info.accountId, JSON.stringify(template), sub],
      }),
      client.query({ name: 'b_job', text: info.jobInsert.text, values: [JSON.stringify([job])] }),
      client.query('commit'),
    ];
    stream.uncork();
    await Promise.all(sent);
  } finally {
    client.release();
  }
  return { id, jobId };
}

async function send(authorization: string | undefined, body: string) {
  const token = authorization?.replace(/^Bearer /, '') ?? '';
  let sub = verified.get(token);
  if (sub === undefined) {
    const { payload } = await jwtVerify(token, jwks);
    sub = String(payload.sub);
    verified.set(token, sub);
  }
  const input = JSON.parse(body) as { to: string; template: { name: string; language: string } };
  const { id, jobId } = await queue(sub, input.template);
  const res = await fetch(graph, {
    method: 'POST',
    headers: { authorization: `Bearer ${GRAPH_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: input.to.replace(/^\+/, ''),
      type: 'template',
      template: { name: input.template.name, language: { code: input.template.language } },
    }),
  });
  const answer = (await res.json()) as { messages: { id: string }[] };
  const { rows } = await pool.query({
    name: 'b_record',
    text: RECORD,
    values: [info.org, id, answer.messages[0]?.id, jobId],
  });
  return rows[0]?.r;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.once('end', () => {
    send(req.headers.authorization, Buffer.concat(chunks).toString('utf8')).then(
      (message) =>
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ message })),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
});
serveBare(server, () => pool.end());
