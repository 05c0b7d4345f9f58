// What moving a large file costs the service in memory (issue 29: a 200 MB upload and download
// raise its RSS by at most 64 MB, on either store). The service runs in a process of its own
// (storage-memory-service.ts), on the disk store and then on the S3 store against a local
// S3-compatible server (fauxqs, from node_modules, in a third process: its memory is not the
// service's). Each is sent BENCH_STORAGE_MB (default 200) as a raw body and again as a
// multipart/form-data body (as storage-js sends a Blob), then both are downloaded; the bytes are
// made and read as they go, never held by this process either. The service's VmRSS is read from
// /proc/<pid>/status every 20 ms, and VmHWM (its peak) at the end: the rise is peak minus the RSS
// before the first byte. Beside them, the baseline: a bare node:http server piping the same bytes
// to a file and back (storage-memory-baseline.ts). A benchmark, not a test: it never fails on a
// figure. Needs Node >= 22.5 (the S3 server's node:sqlite) and Linux (/proc).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { type Child, startChild } from './child.ts';

const MB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_STORAGE_MB ?? 200) * MB;
const GOAL_MB = 64;
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUCKET = 'svc-bench';

/** Kibibytes of `field` (VmRSS, VmHWM) in /proc/<pid>/status. */
function procKb(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? Number.NaN);
}

/** `SIZE` bytes of an MP4 (an ftyp box, then a pattern), made 1 MiB at a time. */
function* video(): Generator<Buffer> {
  const head = Buffer.from([
    0,
    0,
    0,
    0x18,
    ...Buffer.from('ftypisom'),
    0,
    0,
    2,
    0,
    ...Buffer.from('isommp42'),
  ]);
  const block = Buffer.alloc(MB);
  for (let i = 0; i < MB; i++) block[i] = i % 251;
  for (let sent = 0; sent < SIZE; sent += MB) {
    const chunk = Buffer.from(block.subarray(0, Math.min(MB, SIZE - sent)));
    if (sent === 0) head.copy(chunk);
    yield chunk;
  }
}

const BOUNDARY = '----svcbench7d1c';
function* form(): Generator<Buffer> {
  yield Buffer.from(
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="cacheControl"\r\n\r\n3600\r\n` +
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name=""; filename="blob"\r\n` +
      'content-type: video/mp4\r\n\r\n',
  );
  yield* video();
  yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
}

/** POSTs a generated body (streamed, with its length) and resolves with the status. */
function post(url: string, headers: Record<string, string>, body: () => Generator<Buffer>): Promise<number> {
  let length = 0;
  for (const chunk of body()) length += chunk.length;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': length } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    pipeline(Readable.from(body()), req).catch(reject);
  });
}

/** GETs `url`, counting the bytes and dropping them; the count. */
async function download(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`download: ${res.status} ${await res.text()}`);
  let n = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) n += chunk.length;
  return n;
}

type Target = {
  name: string;
  pid: number;
  upload(way: 'raw' | 'form'): Promise<number>;
  get(way: string): Promise<number>;
};

/** Runs the uploads and downloads against `t`, sampling its RSS; the figures in MiB. */
async function measure(t: Target) {
  await new Promise((r) => setTimeout(r, 500)); // settled after its start
  // VmHWM is the peak since the process started (its start and migrations included): reset it to
  // the present (`5` to clear_refs, Linux), so that it is the peak of this measure. Without the
  // right to, the 20 ms samples alone tell the peak.
  let hwm = true;
  try {
    writeFileSync(`/proc/${t.pid}/clear_refs`, '5');
  } catch {
    hwm = false;
  }
  const before = procKb(t.pid, 'VmRSS');
  let sampled = before;
  const timer = setInterval(() => {
    sampled = Math.max(sampled, procKb(t.pid, 'VmRSS'));
  }, 20);
  const t0 = performance.now();
  try {
    for (const way of ['raw', 'form'] as const) {
      const status = await t.upload(way);
      if (status !== 200) throw new Error(`${t.name}: ${way} upload answered ${status}`);
    }
    for (const way of ['raw', 'form']) {
      const got = await t.get(way);
      if (got !== SIZE) throw new Error(`${t.name}: downloaded ${got} bytes of ${SIZE}`);
    }
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - t0) / 1000;
  const peak = hwm ? Math.max(sampled, procKb(t.pid, 'VmHWM')) : sampled;
  return { before: before / 1024, peak: peak / 1024, rise: (peak - before) / 1024, seconds };
}

function serviceTarget(
  name: string,
  child: Child<{ url: string; org: string; serviceRoleKey: string }>,
): Target {
  const { url, org, serviceRoleKey } = child.info;
  const auth = { authorization: `Bearer ${serviceRoleKey}` };
  const objectUrl = (way: string) => `${url}/storage/v1/object/social-media/${org}/bench-${way}.mp4`;
  return {
    name,
    pid: child.pid,
    upload: (way) =>
      way === 'raw'
        ? post(objectUrl(way), { ...auth, 'content-type': 'video/mp4' }, video)
        : post(
            objectUrl(way),
            { ...auth, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
            form,
          ),
    get: (way) =>
      download(`${url}/storage/v1/object/authenticated/social-media/${org}/bench-${way}.mp4`, auth),
  };
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** The local S3-compatible server (as .ci/s3-server starts it), with the bench's bucket. */
async function startS3() {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--no-warnings', path.join(root, 'node_modules/fauxqs/dist/cli.js')],
    {
      env: { ...process.env, FAUXQS_PORT: String(port), FAUXQS_HOST: '127.0.0.1' },
      stdio: 'ignore',
    },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const res = await fetch(`${url}/${BUCKET}`, { method: 'PUT' }).catch(() => null);
    if (res?.ok) break;
    if (i > 200) throw new Error('the S3 server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, stop: () => child.kill('SIGTERM') };
}

const rows: [string, Awaited<ReturnType<typeof measure>>][] = [];

const bare = await startChild<{ url: string }>('storage-memory-baseline.ts', {});
try {
  rows.push([
    'baseline (node:http piping to a file)',
    await measure({
      name: 'baseline',
      pid: bare.pid,
      upload: (way) => post(`${bare.info.url}/${way}`, {}, way === 'raw' ? video : form),
      // The form's file holds its framing too: the raw one is read twice instead.
      get: () => download(`${bare.info.url}/raw`, {}),
    }),
  ]);
} finally {
  await bare.stop();
}

const disk = await startChild<{ url: string; org: string; serviceRoleKey: string }>(
  'storage-memory-service.ts',
  {
    STORAGE_URL: '',
  },
);
try {
  rows.push(['service, disk store', await measure(serviceTarget('disk', disk))]);
} finally {
  await disk.stop();
}

const s3 = await startS3();
try {
  const service = await startChild<{ url: string; org: string; serviceRoleKey: string }>(
    'storage-memory-service.ts',
    {
      STORAGE_URL: `s3://${BUCKET}?endpoint=${s3.url}&region=us-east-1`,
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
    },
  );
  try {
    rows.push(['service, S3 store', await measure(serviceTarget('s3', service))]);
  } finally {
    await service.stop();
  }
} finally {
  s3.stop();
}

const f = (n: number) => n.toFixed(1).padStart(7);
console.log(
  `\n${SIZE / MB} MB uploaded twice (raw body, multipart form) and downloaded twice; RSS of the serving process, MiB (goal: a rise of at most ${GOAL_MB})\n`,
);
console.log('                                         before     peak     rise   seconds');
for (const [name, r] of rows)
  console.log(
    `${name.padEnd(38)} ${f(r.before)}  ${f(r.peak)}  ${f(r.rise)}   ${f(r.seconds)}${name.startsWith('service') ? (r.rise <= GOAL_MB ? '  within the goal' : '  OVER the goal') : ''}`,
  );
