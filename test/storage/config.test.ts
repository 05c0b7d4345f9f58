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

  it('puts the bucket on S3 when STORAGE_URL names one, path-style behind an endpoint', () => {
    expect(loadConfig({}).storage.s3).toBeUndefined();
    expect(
      loadConfig({
        STORAGE_URL: 's3://svc-media/prod/eu?endpoint=http://127.0.0.1:9000/&region=eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIA1',
        AWS_SECRET_ACCESS_KEY: 'secret',
      }).storage.s3,
    ).toEqual({
      bucket: 'svc-media',
      prefix: 'prod/eu',
      region: 'eu-west-1',
      endpoint: 'http://127.0.0.1:9000',
      credentials: { accessKeyId: 'AKIA1', secretAccessKey: 'secret' },
    });
    // No endpoint: AWS itself; no keys: the SDK's own chain (the machine's role, a profile).
    expect(loadConfig({ STORAGE_URL: 's3://svc-media' }).storage.s3).toEqual({
      bucket: 'svc-media',
      prefix: '',
      region: 'us-east-1',
    });
  });

  it.each([
    ['gs://svc-media', /is not s3:/],
    ['s3://Svc_Media', /is not a bucket name/],
    ['s3://key:secret@svc-media', /AWS_ACCESS_KEY_ID/],
    ['s3://svc-media?endpoint=127.0.0.1:9000', /not an http\(s\) origin/],
    ['s3://svc-media?bucket=other', /unknown parameter "bucket"/],
  ])('refuses STORAGE_URL=%s, saying why', (url, why) => {
    expect(() => loadConfig({ STORAGE_URL: url })).toThrow(why);
  });

  it('refuses one AWS key without the other', () => {
    expect(() => loadConfig({ STORAGE_URL: 's3://svc-media', AWS_ACCESS_KEY_ID: 'AKIA1' })).toThrow(
      /set both, or neither/,
    );
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
