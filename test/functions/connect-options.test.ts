// Which sign-in buttons work, decided from configuration alone (src/functions/connect-sign-in.ts):
// without the Meta or Instagram app's credentials each button says, in a sentence, what the
// operator must set, and starting that sign-in is refused with the same sentence. In process, no
// service: the answers depend on nothing else.

import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { connectOptions } from '../../src/functions/connect-options.ts';
import { requireConfigured } from '../../src/functions/connect-sign-in.ts';
import type { Services } from '../../src/services.ts';

const servicesWith = (env: Record<string, string>) =>
  ({ config: loadConfig({ DATA_DIR: '/tmp/unused', ...env }), publicUrl: 'https://svc.example' }) as Services;

async function optionsFor(env: Record<string, string>) {
  const res = await connectOptions(servicesWith(env)).request('/connect-options');
  return res.json();
}

describe('connect-options', () => {
  it('says what the operator must configure for each sign-in when nothing is set', async () => {
    const o = await optionsFor({});
    expect(o.facebook).toEqual({
      available: false,
      message:
        'Connecting with Facebook is not set up on this service yet: the operator must set META_APP_ID and META_APP_SECRET (see docs/connecting-accounts.md).',
      redirect_uri: 'https://svc.example/app/accounts/connect/facebook',
    });
    expect(o.whatsapp.message).toMatch(/META_APP_ID and META_APP_SECRET and META_WHATSAPP_CONFIG_ID/);
    expect(o.instagram.message).toMatch(/INSTAGRAM_APP_ID and INSTAGRAM_APP_SECRET/);
    expect(() => requireConfigured(servicesWith({}), 'instagram')).toThrow(
      expect.objectContaining({ status: 409, code: 'connect_not_configured' }),
    );
  });

  it('names only what is still missing, and sends the browser back to SITE_URL when set', async () => {
    const o = await optionsFor({
      META_APP_ID: '123',
      META_APP_SECRET: 's3cret',
      INSTAGRAM_APP_ID: '456',
      INSTAGRAM_APP_SECRET: 'ig-s3cret',
      SITE_URL: 'https://dash.example',
    });
    expect(o.facebook).toMatchObject({ available: true, message: null });
    expect(o.whatsapp.message).toMatch(/must set META_WHATSAPP_CONFIG_ID \(/);
    expect(o.instagram).toEqual({
      available: true,
      message: null,
      redirect_uri: 'https://dash.example/app/accounts/connect/instagram',
    });
  });

  it('refuses an app id that is not Meta’s numeric id at start', () => {
    expect(() => loadConfig({ META_APP_ID: 'my-app' })).toThrow(/META_APP_ID/);
  });
});
