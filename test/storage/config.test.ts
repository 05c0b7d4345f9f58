import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

// The storage and media download settings, read once at start; a mistyped allow-list entry is
// refused there rather than silently never matching.

describe('storage configuration', () => {
  it('keeps files under DATA_DIR/storage unless STORAGE_DIR says otherwise', () => {
    expect(loadConfig({ DATA_DIR: '/srv/svc' }).storage.dir).toBe(path.resolve('/srv/svc/storage'));
    expect(loadConfig({ STORAGE_DIR: '/mnt/media' }).storage.dir).toBe(path.resolve('/mnt/media'));
  });

  it('reads the media download allow list and deadline', () => {
    expect(loadConfig({}).mediaFetch).toEqual({ allowHosts: [], timeoutMs: 20_000 });
    const c = loadConfig({
      MEDIA_FETCH_ALLOW_HOSTS: 'localhost:8080, Media.Test ,[::1]:9',
      MEDIA_FETCH_TIMEOUT_MS: '500',
    });
    expect(c.mediaFetch).toEqual({ allowHosts: ['localhost:8080', 'media.test', '[::1]:9'], timeoutMs: 500 });
  });

  it.each(['http://media.test', 'media.test/path', 'media.test:port'])(
    'refuses the allow-list entry %s',
    (entry) => {
      expect(() => loadConfig({ MEDIA_FETCH_ALLOW_HOSTS: entry })).toThrow(ConfigError);
    },
  );
});
