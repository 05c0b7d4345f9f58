import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../src/cli/worker.ts';
import { loadConfig } from '../../src/config.ts';

// `svc worker` has no public port: its metrics (sends, publishes, webhook lag, the queue) are on
// METRICS_PORT, and the port closes with the worker.

const dir = mkdtempSync(path.join(tmpdir(), 'svc-metrics-worker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A port nothing listens on now (the kernel's pick, released). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

describe('svc worker', () => {
  it('serves its metrics on METRICS_PORT until it stops', async () => {
    const port = await freePort();
    const stop = await startWorker(
      loadConfig({ DATA_DIR: dir, METRICS_PORT: String(port), LOG_LEVEL: 'silent' }),
    );
    let stopped = false;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('svc_queue_jobs{name="send-message",state="queued"} 0');
      expect(text).toContain('svc_message_sends_total{outcome="sent"} 0');
      expect(text).toContain('svc_webhook_processing_lag_seconds_count 0');
      expect(text).toContain('process_resident_memory_bytes');
      await stop();
      stopped = true;
      await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
    } finally {
      if (!stopped) await stop();
    }
  });
});
