import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context } from 'hono';
import { Hono } from 'hono';
import type { AppEnv } from '../platform/http/env.ts';
import { ROOT } from '../platform/root.ts';

/** Where `npm run build:web` (run by `npm install`'s prepare) writes the dashboard. */
export const DASHBOARD_DIR = new URL('web/dist/', ROOT);

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

// The app talks to this origin only; media previews are signed URLs of this origin (or blobs).
const CSP = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

type File = { body: Buffer; gzip: Buffer | undefined; type: string };

/**
 * The dashboard at `/`, `/app/…` and `/invitations` (the single page, with the anon key it needs embedded as data,
 * never as script), and its hashed assets at `/assets/…`, cached for a year: a new build has new
 * names. Files are read once and kept, gzipped, in memory; the whole build is a few hundred KB.
 */
export function dashboardRoutes({ anonKey, dir = DASHBOARD_DIR }: { anonKey: string; dir?: URL }) {
  const cache = new Map<string, Promise<File | undefined>>();
  const load = (name: string, transform?: (text: string) => string) => {
    let file = cache.get(name);
    if (!file) {
      file = readFile(new URL(name, dir)).then(
        (raw) => {
          const body = transform ? Buffer.from(transform(raw.toString('utf8'))) : raw;
          const type = TYPES[extname(name)] ?? 'text/html; charset=utf-8';
          // Fonts and images are compressed already.
          const gzip = /^(text|application\/json|image\/svg)/.test(type) ? gzipSync(body) : undefined;
          return { body, gzip, type };
        },
        () => undefined,
      );
      cache.set(name, file);
    }
    return file;
  };
  const send = (c: Context<AppEnv>, file: File, cacheControl: string) => {
    const gzip = file.gzip && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
    const headers: Record<string, string> = {
      'content-type': file.type,
      'cache-control': cacheControl,
      'x-content-type-options': 'nosniff',
      vary: 'accept-encoding',
    };
    if (gzip) headers['content-encoding'] = 'gzip';
    return c.body(new Uint8Array(gzip ? (file.gzip as Buffer) : file.body), 200, headers);
  };
  // JSON in a <script type="application/json"> is data; "<" is escaped so it cannot close the tag.
  const config = JSON.stringify({ anonKey }).replaceAll('<', '\\u003c');
  const page = async (c: Context<AppEnv>) => {
    const file = await load('index.html', (html) =>
      html.replace('<!--svc-config-->', `<script type="application/json" id="svc-config">${config}</script>`),
    );
    if (!file) {
      return c.text('The dashboard is not built: run `npm run build:web` (npm install runs it).', 503);
    }
    const res = send(c, file, 'no-cache');
    res.headers.set('content-security-policy', CSP);
    res.headers.set('referrer-policy', 'same-origin');
    return res;
  };

  const app = new Hono<AppEnv>();
  app.get('/', page);
  app.get('/app', page);
  app.get('/app/*', page);
  // Invitation mails link to the site's /invitations (src/domain/invitations.ts).
  app.get('/invitations', page);
  // MCP sign-in: the authorization server sends the person here to consent (src/oauth/routes.ts).
  app.get('/oauth/consent', page);
  app.get('/assets/:name{[A-Za-z0-9_.-]+}', async (c) => {
    const file = await load(`assets/${c.req.param('name')}`);
    return file ? send(c, file, 'public, max-age=31536000, immutable') : c.notFound();
  });
  app.get('/favicon.svg', async (c) => {
    const file = await load('favicon.svg');
    return file ? send(c, file, 'public, max-age=86400') : c.notFound();
  });
  return app;
}
