import path from 'node:path';
import { z } from 'zod';
import { trustedProxies } from './platform/http/client-ip.ts';
import { parseSecretsKey, SECRETS_KEY_HINT } from './platform/secrets.ts';
import type { S3Location } from './platform/storage/open-store.ts';

// The only reader of process.env. Everything else receives a Config.
const int = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(54321),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.string().url().optional(),
  DATABASE_POOL_SIZE: int(10),
  // Connections that single-statement reads share, pipelined (src/platform/db/read-lanes.ts).
  DATABASE_READ_CONNECTIONS: int(1),
  // `transaction`: DATABASE_URL is a pooler in transaction mode (src/platform/db/pg-pooled.ts).
  DATABASE_POOL_MODE: z.enum(['session', 'transaction']).default('session'),
  // A connection past the pooler, for LISTEN only (transaction mode).
  DATABASE_DIRECT_URL: z.string().url().optional(),
  PUBLIC_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Signing key given by configuration (PEM PKCS#8 or a private JWK as JSON) instead of the data dir.
  JWT_PRIVATE_KEY: z.string().min(1).optional(),
  JWT_EXPIRY_SECONDS: int(3600),
  // Key that seals connected accounts' secrets (AES-256-GCM) instead of DATA_DIR/secrets.key.
  SECRETS_KEY: z.string().min(1).optional(),
  REFRESH_TOKEN_REUSE_INTERVAL_SECONDS: int(10),
  BCRYPT_COST: z.coerce.number().int().min(10).max(15).default(10),
  // Brute-force guards on password login.
  LOGIN_MAX_PER_IP: int(60),
  LOGIN_IP_WINDOW_SECONDS: int(300),
  // The account's ceiling across all addresses (distributed guessing), higher and longer than the
  // per-address lock below, so a stranger from one address cannot lock the owner out.
  LOGIN_MAX_FAILURES_PER_EMAIL: int(100),
  LOGIN_EMAIL_WINDOW_SECONDS: int(3600),
  SIGNUP_MAX_PER_IP: int(30),
  SIGNUP_IP_WINDOW_SECONDS: int(3600),
  // Spec section 8. Counters live in Redis when REDIS_URL is set, so processes share them.
  REDIS_URL: z.string().url().optional(),
  // Namespace of this deployment's counters in a Redis shared with others.
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]{1,64}$/)
    .default('svc'),
  RATE_LIMIT_STANDARD_PER_MINUTE: int(100),
  RATE_LIMIT_BULK_PER_MINUTE: int(20),
  RATE_LIMIT_WEBHOOK_PER_MINUTE: int(500),
  RATE_LIMIT_AGENT_AUTH_PER_MINUTE: int(10),
  AGENT_REGISTER_PER_EMAIL_PER_DAY: int(3),
  AGENT_REGISTER_PER_IP_PER_HOUR: int(10),
  // GET /metrics on the public port, for `Authorization: Bearer <METRICS_TOKEN>` only (unset: 404).
  METRICS_TOKEN: z.string().min(16).optional(),
  // A listener of its own serving only /metrics without a token (unset: none), on METRICS_HOST.
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  // Traces over OTLP/HTTP to this collector (…/v1/traces is appended); unset: no tracing at all.
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('svc'),
  // Proxies whose X-Forwarded-For is believed: comma-separated addresses or CIDR ranges.
  TRUST_PROXY: z.string().optional(),
  // Browser origins besides PUBLIC_URL's that may call the MCP endpoint: comma-separated origins.
  MCP_ALLOWED_ORIGINS: z.string().optional(),
  BODY_LIMIT_BYTES: int(1024 * 1024),
  // Webhook receivers take whole orders as the provider sends them (a 250-line Shopify order is ~2 MB).
  WEBHOOK_BODY_LIMIT_BYTES: int(8 * 1024 * 1024),
  SHUTDOWN_TIMEOUT_MS: int(10_000),
  // Where links in emails land (the dashboard); unset: the service's own public address.
  SITE_URL: z.string().url().optional(),
  // Further addresses a recovery link may redirect to: comma-separated URLs; one ending in `/*`
  // allows every path under it on that same origin.
  URI_ALLOW_LIST: z.string().optional(),
  // smtp://user:pass@host:587 or smtps://…; unset: mails are written to DATA_DIR/outbox (development).
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')
    .optional(),
  MAIL_FROM: z.string().min(3).default('svc <no-reply@localhost>'),
  RECOVERY_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  RECOVER_MAX_PER_EMAIL: int(5),
  RECOVER_EMAIL_WINDOW_SECONDS: int(3600),
  RECOVER_MAX_PER_IP: int(30),
  RECOVER_IP_WINDOW_SECONDS: int(3600),
  // Invitation mails (re-sends included) an organization may send, one person may send across all
  // their organizations, and one address may receive: nobody spams or mail-bombs through us.
  INVITES_PER_ORG_PER_HOUR: int(50),
  INVITES_PER_USER_PER_HOUR: int(50),
  INVITES_PER_EMAIL_PER_HOUR: int(3),
  // Meta's Graph API (WhatsApp, Messenger) and Instagram's (Instagram API with Instagram Login):
  // point both at `svc dev fake-graph` in development. docs/graph-api.md.
  META_GRAPH_URL: z.string().url().default('https://graph.facebook.com'),
  META_INSTAGRAM_GRAPH_URL: z.string().url().default('https://graph.instagram.com'),
  // The newest Graph version when this was written (v26.0, July 2026); bump with Meta's changelog.
  META_GRAPH_VERSION: z
    .string()
    .regex(/^v\d+\.\d+$/, 'must look like v26.0')
    .default('v26.0'),
  META_GRAPH_TIMEOUT_MS: z.coerce.number().int().min(1).max(120_000).default(10_000),
  // Inbound webhooks from Meta (docs/webhooks.md): the app secret that signs every delivery
  // (X-Hub-Signature-256) and the token of the subscription handshake. Unset: the receivers
  // (whatsapp-webhook, meta-webhook) answer 404, as if they did not exist.
  META_APP_SECRET: z.string().min(1).optional(),
  WHATSAPP_VERIFY_TOKEN: z.string().min(1).optional(),
  // The static bearer token trusted systems post internal events with (internal-webhook).
  // Unset: the receiver answers 404, as if it did not exist.
  INTERNAL_WEBHOOK_TOKEN: z.string().min(1).optional(),
  // Processing a stored webhook event: runs in all, and the first wait (doubling, capped at 30 min).
  WEBHOOK_RETRY_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
  WEBHOOK_RETRY_BACKOFF_SECONDS: z.coerce.number().int().min(1).max(3600).default(15),
  // A run not finished by then is presumed dead (a killed worker) and the event runs again. Well
  // above a run's own work (one transaction, no outside calls); tests shorten it.
  WEBHOOK_LEASE_SECONDS: z.coerce.number().int().min(1).max(3600).default(120),
  // Outbound messages: retried with exponential backoff from SEND_RETRY_BACKOFF_SECONDS (doubling,
  // capped at 30 min) for SEND_RETRY_ATTEMPTS runs, and never past SEND_RETRY_MAX_AGE_SECONDS;
  // the defaults keep trying for 2 to 2.5 hours (docs/jobs.md). Tests shorten them.
  // The first retry of a send whose immediate attempt did not go through (the job's delayed start:
  // long enough that the request's own attempt, up to META_GRAPH_TIMEOUT_MS, is over). Tests shorten it.
  SEND_FIRST_RETRY_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  SEND_RETRY_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(10),
  SEND_RETRY_BACKOFF_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  SEND_RETRY_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 86400)
    .default(3 * 3600),
  // The retention purge (docs/retention.md): rows per delete statement, and the UTC hour of the
  // daily run.
  PURGE_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(1000),
  PURGE_HOUR_UTC: z.coerce.number().int().min(0).max(23).default(3),
  // The social-media bucket's files (docs/storage.md); unset: DATA_DIR/storage.
  STORAGE_DIR: z.string().min(1).optional(),
  // An S3-compatible bucket instead of STORAGE_DIR: s3://bucket[/prefix]?region=…&endpoint=…
  // (docs/operations.md, "Object store"). Credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,
  // or, both unset, the AWS SDK's own chain (a role of the machine, a profile).
  STORAGE_URL: z.string().url().optional(),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  // Hosts (host or host:port, comma-separated) media_urls may fetch from over plain http and at
  // private addresses: development and tests only; everything else must be public https.
  MEDIA_FETCH_ALLOW_HOSTS: z.string().optional(),
  // Deadline of one post's media import, all of its media_urls together (redirects and bodies
  // included): a request never waits longer than this for downloads.
  MEDIA_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  // The social publisher (docs/social.md): runs per post (transient Graph errors), the first wait
  // (doubling, capped at 30 min); how often and how many times one run reads an Instagram container
  // before leaving it for the next run; how often Insights are pulled for a published post.
  SOCIAL_PUBLISH_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
  SOCIAL_PUBLISH_BACKOFF_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  SOCIAL_CONTAINER_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(3000),
  SOCIAL_CONTAINER_POLLS: z.coerce.number().int().min(1).max(100).default(10),
  SOCIAL_METRICS_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
  // The job worker (docs/jobs.md): in this process beside the API, or not (`svc worker` elsewhere).
  WORKER: z.enum(['inline', 'off']).default('inline'),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  // How often an idle worker looks for due jobs; pg-boss polls no faster than every 500 ms.
  WORKER_POLL_MS: z.coerce.number().int().min(500).default(2000),
  // How often a worker looks for webhook receipts of other processes (the webhook inbox,
  // docs/webhooks.md); a receipt of its own process wakes it at once.
  WEBHOOK_INBOX_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  // How often a worker returns jobs whose lease ran out (a killed or hung worker's) to the queue.
  WORKER_SUPERVISE_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  // How often a worker sweeps for messages, webhook events and posts whose job is gone or failed.
  WORKER_SWEEP_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  // How long after `svc start` answers the inline worker begins (its first polls, the sweep, expired
  // leases, the recurring jobs' schedule): the first requests do not wait behind its statements on
  // PGlite's one connection. 0: before the service answers, as before (docs/decisions.md).
  WORKER_START_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  // How long the MCP endpoint trusts its last look at an agent key: the bound on a revocation's
  // reach when its notice is lost (docs/decisions.md, "Revocation reaches every process").
  AGENT_KEY_RECHECK_SECONDS: z.coerce.number().int().min(1).max(60).default(5),
  // /realtime/v1 (docs/realtime.md): channels one websocket may join, and channels one
  // organization may hold joined in one API process.
  REALTIME_CHANNELS_PER_SOCKET: z.coerce.number().int().min(1).max(1000).default(100),
  REALTIME_CHANNELS_PER_ORGANIZATION: z.coerce.number().int().min(1).max(100_000).default(500),
  // Open websockets from one client address (an IPv6 /64) in one API process: the anon key is
  // public, so sockets cost nothing to open without it.
  REALTIME_SOCKETS_PER_ADDRESS: z.coerce.number().int().min(1).max(100_000).default(100),
  // How long an API process keeps its LISTEN svc_realtime after its last channel left (it holds
  // one only while it has a channel: docs/decisions.md, "LISTEN only with a channel").
  REALTIME_LISTEN_LINGER_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  // Failed sign-ins per account from one client address before that address is locked out of
  // that account (LOGIN_MAX_FAILURES_PER_EMAIL is the ceiling across all addresses).
  LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP: int(10),
  LOGIN_EMAIL_AND_IP_WINDOW_SECONDS: int(900),
  // Connecting accounts by signing in with Meta (docs/connecting-accounts.md). The Meta app's id
  // (its secret is META_APP_SECRET); unset: "Connect with Facebook" and "Connect WhatsApp" say what
  // the operator must configure.
  META_APP_ID: z.string().regex(/^\d+$/, 'must be the numeric app id from the Meta App Dashboard').optional(),
  // Facebook Login for Business: the configuration's id; unset: the dialog asks for the permissions by scope.
  META_LOGIN_CONFIG_ID: z.string().regex(/^\d+$/, 'must be a numeric configuration id').optional(),
  // WhatsApp Embedded Signup: its Facebook Login for Business configuration's id; unset: the
  // WhatsApp button says what to configure.
  META_WHATSAPP_CONFIG_ID: z.string().regex(/^\d+$/, 'must be a numeric configuration id').optional(),
  // Where browsers open Meta's login dialog; `svc dev fake-graph`'s address in development.
  META_DIALOG_URL: z.string().url().default('https://www.facebook.com'),
  // Instagram API with Instagram Login has its own app id and secret (App Dashboard > Instagram >
  // API setup with Instagram login); unset: "Connect Instagram" says what to configure.
  INSTAGRAM_APP_ID: z.string().regex(/^\d+$/, 'must be the numeric Instagram app id').optional(),
  INSTAGRAM_APP_SECRET: z.string().min(1).optional(),
  // Instagram's authorization window (browsers) and its code exchange (the service); the fake's
  // address in development.
  INSTAGRAM_AUTHORIZE_URL: z.string().url().default('https://www.instagram.com'),
  INSTAGRAM_API_URL: z.string().url().default('https://api.instagram.com'),
  // Shopify (docs/connecting-accounts.md "Shopify"): where a shop is reached ({shop} stands for its
  // my-shop.myshopify.com domain; `svc dev fake-shopify` serves every shop under a path prefix), the
  // Admin API version and deadline, and the app's client id and secret for "Install on Shopify"
  // (the secret also signs installed shops' webhooks). Without both, only pasted tokens connect.
  SHOPIFY_SHOP_URL: z
    .string()
    .url()
    .refine((v) => v.includes('{shop}'), 'must contain {shop}, e.g. https://{shop}')
    .default('https://{shop}'),
  SHOPIFY_API_VERSION: z
    .string()
    .regex(/^\d{4}-\d{2}$/, 'must look like 2026-10')
    .default('2026-10'),
  SHOPIFY_TIMEOUT_MS: z.coerce.number().int().min(1).max(120_000).default(10_000),
  SHOPIFY_API_KEY: z.string().min(1).optional(),
  SHOPIFY_API_SECRET: z.string().min(1).optional(),
  // Billing through Stripe (docs/billing.md): all of the key, the webhook secret and the six
  // price ids, or none (self-hosted: only the operator changes plans). STRIPE_API_URL points the
  // official SDK elsewhere (`svc dev fake-stripe`).
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  STRIPE_PRICE_STARTER: z.string().min(1).optional(),
  STRIPE_PRICE_GROWTH: z.string().min(1).optional(),
  STRIPE_PRICE_SCALE: z.string().min(1).optional(),
  // The per-agent price, one per plan that bills agents differently (starter 10 USD, growth and scale 5 USD).
  STRIPE_PRICE_AGENT_STARTER: z.string().min(1).optional(),
  STRIPE_PRICE_AGENT_GROWTH: z.string().min(1).optional(),
  STRIPE_PRICE_AGENT_SCALE: z.string().min(1).optional(),
  STRIPE_API_URL: z.string().url().optional(),
  // Stripe-Signature timestamps older (or newer) than this are refused: Stripe's own default.
  STRIPE_WEBHOOK_TOLERANCE_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  // After a failed payment the paid plan is kept this long (Stripe retries the card), then the
  // organization falls back to free unless the invoice was paid meanwhile.
  BILLING_GRACE_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(60 * 86400)
    .default(7 * 86400),
  // Whom owners ask for another plan when billing is off (an email address or a URL), shown on the dashboard.
  BILLING_CONTACT: z.string().min(1).max(200).optional(),
  // How many of one post's media_urls download at once (docs/storage.md): each streams into the
  // store (a few buffers; up to three 8 MiB parts on S3), so this bounds what one import takes.
  MEDIA_FETCH_CONCURRENCY: z.coerce.number().int().min(1).max(10).default(4),
  // The daily connection check (docs/jobs.md "Connection health"): its UTC hour, how many days
  // before an Instagram token ends it is refreshed, how many accounts are asked at once. With
  // META_APP_ID (the secret is META_APP_SECRET), Meta tokens are inspected with debug_token.
  CONNECTION_CHECK_HOUR_UTC: z.coerce.number().int().min(0).max(23).default(4),
  CONNECTION_REFRESH_DAYS: z.coerce.number().int().min(1).max(50).default(7),
  CONNECTION_CHECK_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(4),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  databaseReadConnections: number;
  /** `transaction`: databaseUrl is a pooler in transaction mode (no named statements, no LISTEN). */
  databasePoolMode: 'session' | 'transaction';
  /** Past the pooler, for LISTEN; unset in transaction mode: notices are not heard (pg-pooled.ts). */
  databaseDirectUrl: string | undefined;
  /** Unset means: derive from the address the server actually listens on. */
  publicUrl: string | undefined;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  jwtPrivateKey: string | undefined;
  jwtExpirySeconds: number;
  /** 32 bytes; unset: generated on first start into DATA_DIR (src/platform/secrets.ts). */
  secretsKey: Buffer | undefined;
  refreshTokenReuseIntervalSeconds: number;
  bcryptCost: number;
  login: {
    maxPerIp: number;
    ipWindowSeconds: number;
    maxFailuresPerEmail: number;
    emailWindowSeconds: number;
  };
  signup: { maxPerIp: number; ipWindowSeconds: number };
  redisUrl: string | undefined;
  redisPrefix: string;
  rateLimits: {
    standardPerMinute: number;
    bulkPerMinute: number;
    webhookPerMinute: number;
    agentAuthPerMinute: number;
    registerPerEmailPerDay: number;
    registerPerIpPerHour: number;
  };
  trustProxy: string[];
  /** Prometheus metrics (src/platform/metrics): on the public port behind a token, and/or on a port of their own. */
  metrics: { token: string | undefined; port: number | undefined; host: string };
  /** OpenTelemetry traces (src/platform/tracing): sent to `endpoint` when it is set. */
  tracing: { endpoint: string | undefined; serviceName: string };
  /** Origins (scheme://host[:port]) allowed to call the MCP endpoint besides the service's own. */
  mcpAllowedOrigins: string[];
  bodyLimitBytes: number;
  /** The body limit of the webhook receivers (WEBHOOK_RECEIVERS). */
  webhookBodyLimitBytes: number;
  shutdownTimeoutMs: number;
  /** Unset means: the public URL. */
  siteUrl: string | undefined;
  uriAllowList: string[];
  mail: {
    smtpUrl: string | undefined;
    from: string;
    invitesPerOrgPerHour: number;
    invitesPerUserPerHour: number;
    invitesPerEmailPerHour: number;
  };
  /** Meta's webhooks: both unset means the receivers answer 404. */
  meta: { appSecret: string | undefined; verifyToken: string | undefined };
  /** Bearer token of internal-webhook; unset: that receiver answers 404. */
  internalWebhookToken: string | undefined;
  webhookRetry: { attempts: number; backoffSeconds: number; leaseSeconds: number };
  /** Where and how the Graph API is called (src/channels/graph-client.ts). */
  graph: { url: string; instagramUrl: string; version: string; timeoutMs: number };
  /** How outbound messages are retried (src/jobs/send-message.ts). */
  sendRetry: { firstRetrySeconds: number; attempts: number; backoffSeconds: number; maxAgeSeconds: number };
  worker: {
    mode: 'inline' | 'off';
    concurrency: number;
    pollMs: number;
    /** How often its webhook inbox router looks for other processes' receipts. */
    inboxPollMs: number;
    superviseSeconds: number;
    sweepSeconds: number;
    /** The inline worker begins this long after the service answers (0: before). */
    startDelayMs: number;
  };
  /** The retention purge (src/jobs/purge-expired.ts): rows per statement, UTC hour of the daily run. */
  purge: { batchSize: number; hourUtc: number };
  /** The object store of /storage/v1 (src/platform/storage/open-store.ts): on disk, or S3 when `s3`. */
  storage: { dir: string; s3?: S3Location };
  mediaFetch: { allowHosts: string[]; timeoutMs: number };
  /** The publisher and the metrics job (src/jobs/publish-social-post.ts, pull-social-metrics.ts). */
  social: {
    publishAttempts: number;
    publishBackoffSeconds: number;
    containerPollMs: number;
    containerPolls: number;
    metricsIntervalSeconds: number;
  };
  recovery: {
    tokenTtlSeconds: number;
    maxPerEmail: number;
    emailWindowSeconds: number;
    maxPerIp: number;
    ipWindowSeconds: number;
  };
  /** How long the MCP endpoint remembers that an agent key is live (src/domain/key-check.ts). */
  agentKeyRecheckSeconds: number;
  /** /realtime/v1's limits (src/realtime/connection.ts). */
  realtime: {
    channelsPerSocket: number;
    channelsPerOrganization: number;
    socketsPerAddress: number;
    listenLingerMs: number;
  };
  /** Failed sign-ins per (account, client address) before that address is locked out of the account. */
  loginPerEmailAndIp: { maxFailures: number; windowSeconds: number };
  /** Signing in with Meta to connect accounts (src/channels/meta-oauth.ts). */
  metaLogin: {
    appId: string | undefined;
    appSecret: string | undefined;
    loginConfigId: string | undefined;
    whatsappConfigId: string | undefined;
    dialogUrl: string;
  };
  /** Instagram API with Instagram Login (src/channels/meta-oauth-instagram.ts). */
  instagramLogin: {
    appId: string | undefined;
    appSecret: string | undefined;
    authorizeUrl: string;
    apiUrl: string;
  };
  /** Shopify's Admin API and the app that installs on shops (src/channels/shopify-admin.ts). */
  shopify: {
    shopUrl: string;
    apiVersion: string;
    timeoutMs: number;
    apiKey: string | undefined;
    apiSecret: string | undefined;
  };
  /** Stripe billing (docs/billing.md); null: billing is off and only the operator changes plans. */
  billing: BillingConfig | null;
  /** Shown to owners as whom to ask for another plan when billing is off. */
  billingContact: string | undefined;
  /** How many of one post's media_urls download at once (src/domain/media-import.ts). */
  mediaImport: { concurrency: number };
  /** The daily connection check (src/jobs/check-connections.ts). */
  connectionCheck: {
    hourUtc: number;
    refreshDays: number;
    concurrency: number;
    /** `{META_APP_ID}|{META_APP_SECRET}` for debug_token; unset without both. */
    metaAppToken: string | undefined;
  };
};

export type BillingConfig = {
  secretKey: string;
  webhookSecret: string;
  /** Paid plan slug → its Stripe price id. */
  planPrices: Record<string, string>;
  /** Paid plan slug → the price id of one additional agent on it. */
  agentPrices: Record<string, string>;
  /** The SDK's host/port/protocol, parsed from STRIPE_API_URL; unset: api.stripe.com. */
  api: { host: string; port: number; protocol: 'http' | 'https' } | undefined;
  webhookToleranceSeconds: number;
  graceSeconds: number;
};

export class ConfigError extends Error {}

/** STORAGE_URL read: `s3://bucket[/prefix]?region=…&endpoint=…`, nothing else accepted. */
export function parseStorageUrl(text: string): S3Location {
  const bad = (why: string) =>
    new ConfigError(
      `invalid configuration:\n  STORAGE_URL: ${why} (s3://bucket[/prefix]?region=…&endpoint=…)`,
    );
  const url = new URL(text);
  if (url.protocol !== 's3:') throw bad(`"${url.protocol}" is not s3:`);
  if (url.username || url.password)
    throw bad('credentials go in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(url.hostname))
    throw bad(`"${url.hostname}" is not a bucket name`);
  const unknown = [...url.searchParams.keys()].find((k) => k !== 'region' && k !== 'endpoint');
  if (unknown) throw bad(`unknown parameter "${unknown}"`);
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]+\/?$/.test(endpoint))
    throw bad(`endpoint "${endpoint}" is not an http(s) origin`);
  return {
    bucket: url.hostname,
    prefix: decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, ''),
    region: url.searchParams.get('region') ?? 'us-east-1',
    ...(endpoint ? { endpoint: endpoint.replace(/\/$/, '') } : {}),
  };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings in the environment mean "unset", as shells and .env files tend to produce them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  const trustProxy = (e.TRUST_PROXY ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  let mcpAllowedOrigins: string[];
  try {
    trustedProxies(trustProxy);
    mcpAllowedOrigins = (e.MCP_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean)
      .map(origin);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  ${(err as Error).message}`);
  }
  const secretsKey = e.SECRETS_KEY === undefined ? undefined : parseSecretsKey(e.SECRETS_KEY);
  // Never quote the value: it is a secret, and a near miss is one too.
  if (secretsKey === null)
    throw new ConfigError(`invalid configuration:\n  SECRETS_KEY: ${SECRETS_KEY_HINT}`);
  const uriAllowList = (e.URI_ALLOW_LIST ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  // An entry that is no URL would never match: say so at start rather than redirect to the site.
  const badUri = uriAllowList.find((u) => !URL.canParse(u.replace(/\*$/, '')));
  if (badUri) throw new ConfigError(`invalid configuration:\n  URI_ALLOW_LIST: "${badUri}" is not a URL`);
  // `*` only as a path prefix (`https://host/path/*`): `https://host*` reads as "any host starting
  // with host", which is what an attacker registering host.evil.io wants.
  const badStar = uriAllowList.find((u) => u.includes('*') && !/^[^*]*\/\*$/.test(u));
  if (badStar)
    throw new ConfigError(
      `invalid configuration:\n  URI_ALLOW_LIST: "${badStar}": a * may only end a path, right after a /`,
    );
  const mediaAllowHosts = commaList(e.MEDIA_FETCH_ALLOW_HOSTS);
  if (!e.AWS_ACCESS_KEY_ID !== !e.AWS_SECRET_ACCESS_KEY)
    throw new ConfigError(
      'invalid configuration:\n  AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both, or neither (then the AWS SDK finds credentials itself)',
    );
  const s3 = e.STORAGE_URL
    ? {
        ...parseStorageUrl(e.STORAGE_URL),
        ...(e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
          ? {
              credentials: {
                accessKeyId: e.AWS_ACCESS_KEY_ID,
                secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
                ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}),
              },
            }
          : {}),
      }
    : undefined;
  // `host` or `host:port` as a URL writes them (IPv6 in brackets); anything else would never match.
  const badHost = mediaAllowHosts.find((h) => !/^([a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?$/.test(h));
  if (badHost)
    throw new ConfigError(
      `invalid configuration:\n  MEDIA_FETCH_ALLOW_HOSTS: "${badHost}" is not a host or host:port (no scheme, no path)`,
    );
  // The worker's first retry must come after the request's own attempt has had its deadline.
  if (e.SEND_FIRST_RETRY_SECONDS * 1000 <= e.META_GRAPH_TIMEOUT_MS)
    throw new ConfigError(
      `invalid configuration:\n  SEND_FIRST_RETRY_SECONDS (${e.SEND_FIRST_RETRY_SECONDS}) must be longer than META_GRAPH_TIMEOUT_MS (${e.META_GRAPH_TIMEOUT_MS} ms)`,
    );
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databaseReadConnections: e.DATABASE_READ_CONNECTIONS,
    databasePoolMode: e.DATABASE_POOL_MODE,
    databaseDirectUrl: e.DATABASE_DIRECT_URL,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    logLevel: e.LOG_LEVEL,
    jwtPrivateKey: e.JWT_PRIVATE_KEY,
    jwtExpirySeconds: e.JWT_EXPIRY_SECONDS,
    secretsKey,
    refreshTokenReuseIntervalSeconds: e.REFRESH_TOKEN_REUSE_INTERVAL_SECONDS,
    bcryptCost: e.BCRYPT_COST,
    login: {
      maxPerIp: e.LOGIN_MAX_PER_IP,
      ipWindowSeconds: e.LOGIN_IP_WINDOW_SECONDS,
      maxFailuresPerEmail: e.LOGIN_MAX_FAILURES_PER_EMAIL,
      emailWindowSeconds: e.LOGIN_EMAIL_WINDOW_SECONDS,
    },
    signup: { maxPerIp: e.SIGNUP_MAX_PER_IP, ipWindowSeconds: e.SIGNUP_IP_WINDOW_SECONDS },
    redisUrl: e.REDIS_URL,
    redisPrefix: e.REDIS_PREFIX,
    rateLimits: {
      standardPerMinute: e.RATE_LIMIT_STANDARD_PER_MINUTE,
      bulkPerMinute: e.RATE_LIMIT_BULK_PER_MINUTE,
      webhookPerMinute: e.RATE_LIMIT_WEBHOOK_PER_MINUTE,
      agentAuthPerMinute: e.RATE_LIMIT_AGENT_AUTH_PER_MINUTE,
      registerPerEmailPerDay: e.AGENT_REGISTER_PER_EMAIL_PER_DAY,
      registerPerIpPerHour: e.AGENT_REGISTER_PER_IP_PER_HOUR,
    },
    trustProxy,
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT, host: e.METRICS_HOST },
    tracing: { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME },
    mcpAllowedOrigins,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    webhookBodyLimitBytes: e.WEBHOOK_BODY_LIMIT_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    siteUrl: e.SITE_URL?.replace(/\/+$/, ''),
    uriAllowList,
    mail: {
      smtpUrl: e.SMTP_URL,
      from: e.MAIL_FROM,
      invitesPerOrgPerHour: e.INVITES_PER_ORG_PER_HOUR,
      invitesPerUserPerHour: e.INVITES_PER_USER_PER_HOUR,
      invitesPerEmailPerHour: e.INVITES_PER_EMAIL_PER_HOUR,
    },
    graph: {
      url: e.META_GRAPH_URL.replace(/\/+$/, ''),
      instagramUrl: e.META_INSTAGRAM_GRAPH_URL.replace(/\/+$/, ''),
      version: e.META_GRAPH_VERSION,
      timeoutMs: e.META_GRAPH_TIMEOUT_MS,
    },
    meta: { appSecret: e.META_APP_SECRET, verifyToken: e.WHATSAPP_VERIFY_TOKEN },
    internalWebhookToken: e.INTERNAL_WEBHOOK_TOKEN,
    webhookRetry: {
      attempts: e.WEBHOOK_RETRY_ATTEMPTS,
      backoffSeconds: e.WEBHOOK_RETRY_BACKOFF_SECONDS,
      leaseSeconds: e.WEBHOOK_LEASE_SECONDS,
    },
    sendRetry: {
      firstRetrySeconds: e.SEND_FIRST_RETRY_SECONDS,
      attempts: e.SEND_RETRY_ATTEMPTS,
      backoffSeconds: e.SEND_RETRY_BACKOFF_SECONDS,
      maxAgeSeconds: e.SEND_RETRY_MAX_AGE_SECONDS,
    },
    worker: {
      mode: e.WORKER,
      concurrency: e.WORKER_CONCURRENCY,
      pollMs: e.WORKER_POLL_MS,
      inboxPollMs: e.WEBHOOK_INBOX_POLL_MS,
      superviseSeconds: e.WORKER_SUPERVISE_SECONDS,
      sweepSeconds: e.WORKER_SWEEP_SECONDS,
      startDelayMs: e.WORKER_START_DELAY_MS,
    },
    purge: { batchSize: e.PURGE_BATCH_SIZE, hourUtc: e.PURGE_HOUR_UTC },
    storage: {
      dir: path.resolve(e.STORAGE_DIR ?? path.join(e.DATA_DIR, 'storage')),
      ...(s3 ? { s3 } : {}),
    },
    mediaFetch: { allowHosts: mediaAllowHosts, timeoutMs: e.MEDIA_FETCH_TIMEOUT_MS },
    social: {
      publishAttempts: e.SOCIAL_PUBLISH_ATTEMPTS,
      publishBackoffSeconds: e.SOCIAL_PUBLISH_BACKOFF_SECONDS,
      containerPollMs: e.SOCIAL_CONTAINER_POLL_MS,
      containerPolls: e.SOCIAL_CONTAINER_POLLS,
      metricsIntervalSeconds: e.SOCIAL_METRICS_INTERVAL_SECONDS,
    },
    recovery: {
      tokenTtlSeconds: e.RECOVERY_TOKEN_TTL_SECONDS,
      maxPerEmail: e.RECOVER_MAX_PER_EMAIL,
      emailWindowSeconds: e.RECOVER_EMAIL_WINDOW_SECONDS,
      maxPerIp: e.RECOVER_MAX_PER_IP,
      ipWindowSeconds: e.RECOVER_IP_WINDOW_SECONDS,
    },
    agentKeyRecheckSeconds: e.AGENT_KEY_RECHECK_SECONDS,
    realtime: {
      channelsPerSocket: e.REALTIME_CHANNELS_PER_SOCKET,
      channelsPerOrganization: e.REALTIME_CHANNELS_PER_ORGANIZATION,
      socketsPerAddress: e.REALTIME_SOCKETS_PER_ADDRESS,
      listenLingerMs: e.REALTIME_LISTEN_LINGER_SECONDS * 1000,
    },
    loginPerEmailAndIp: {
      maxFailures: e.LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP,
      windowSeconds: e.LOGIN_EMAIL_AND_IP_WINDOW_SECONDS,
    },
    metaLogin: {
      appId: e.META_APP_ID,
      appSecret: e.META_APP_SECRET,
      loginConfigId: e.META_LOGIN_CONFIG_ID,
      whatsappConfigId: e.META_WHATSAPP_CONFIG_ID,
      dialogUrl: e.META_DIALOG_URL.replace(/\/+$/, ''),
    },
    instagramLogin: {
      appId: e.INSTAGRAM_APP_ID,
      appSecret: e.INSTAGRAM_APP_SECRET,
      authorizeUrl: e.INSTAGRAM_AUTHORIZE_URL.replace(/\/+$/, ''),
      apiUrl: e.INSTAGRAM_API_URL.replace(/\/+$/, ''),
    },
    shopify: {
      shopUrl: e.SHOPIFY_SHOP_URL.replace(/\/+$/, ''),
      apiVersion: e.SHOPIFY_API_VERSION,
      timeoutMs: e.SHOPIFY_TIMEOUT_MS,
      apiKey: e.SHOPIFY_API_KEY,
      apiSecret: e.SHOPIFY_API_SECRET,
    },
    billing: billingConfig(e),
    billingContact: e.BILLING_CONTACT,
    mediaImport: { concurrency: e.MEDIA_FETCH_CONCURRENCY },
    connectionCheck: {
      hourUtc: e.CONNECTION_CHECK_HOUR_UTC,
      refreshDays: e.CONNECTION_REFRESH_DAYS,
      concurrency: e.CONNECTION_CHECK_CONCURRENCY,
      metaAppToken: e.META_APP_ID && e.META_APP_SECRET ? `${e.META_APP_ID}|${e.META_APP_SECRET}` : undefined,
    },
  };
}

const BILLING_KEYS = [
  'STRIPE_SECRET_KEY',
  'STRIPE_WEBHOOK_SECRET',
  'STRIPE_PRICE_STARTER',
  'STRIPE_PRICE_GROWTH',
  'STRIPE_PRICE_SCALE',
  'STRIPE_PRICE_AGENT_STARTER',
  'STRIPE_PRICE_AGENT_GROWTH',
  'STRIPE_PRICE_AGENT_SCALE',
] as const;

/** All of the billing keys or none: half a configuration would take money it cannot account for. */
function billingConfig(e: z.infer<typeof schema>): BillingConfig | null {
  const missing = BILLING_KEYS.filter((k) => !e[k]);
  if (missing.length === BILLING_KEYS.length) return null;
  if (missing.length)
    throw new ConfigError(
      `invalid configuration:\n  billing needs all of ${BILLING_KEYS.join(', ')}; missing: ${missing.join(', ')}`,
    );
  let api: BillingConfig['api'];
  if (e.STRIPE_API_URL) {
    const u = new URL(e.STRIPE_API_URL);
    const protocol = u.protocol === 'http:' ? 'http' : 'https';
    api = { host: u.hostname, port: Number(u.port) || (protocol === 'http' ? 80 : 443), protocol };
  }
  return {
    secretKey: e.STRIPE_SECRET_KEY as string,
    webhookSecret: e.STRIPE_WEBHOOK_SECRET as string,
    planPrices: {
      starter: e.STRIPE_PRICE_STARTER as string,
      growth: e.STRIPE_PRICE_GROWTH as string,
      scale: e.STRIPE_PRICE_SCALE as string,
    },
    agentPrices: {
      starter: e.STRIPE_PRICE_AGENT_STARTER as string,
      growth: e.STRIPE_PRICE_AGENT_GROWTH as string,
      scale: e.STRIPE_PRICE_AGENT_SCALE as string,
    },
    api,
    webhookToleranceSeconds: e.STRIPE_WEBHOOK_TOLERANCE_SECONDS,
    graceSeconds: e.BILLING_GRACE_SECONDS,
  };
}

const commaList = (text: string | undefined) =>
  (text ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

/** An origin as browsers send it (`Origin` header): scheme, host and port only, lower-cased. */
function origin(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {}
  if (
    !url ||
    !/^https?:$/.test(url.protocol) ||
    url.username ||
    url.pathname !== '/' ||
    url.search ||
    url.hash
  ) {
    throw new Error(`MCP_ALLOWED_ORIGINS: "${text}" is not an origin such as https://app.example.com`);
  }
  return url.origin;
}

/** The base address clients are told about: PUBLIC_URL, else the address the server listens on. */
export function resolvePublicUrl(config: Config, port: number): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
