// Without SHOPIFY_API_KEY and SHOPIFY_API_SECRET the service cannot install its app: the dashboard
// is told what the operator must set, and starting or finishing an install is refused the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { SHOPIFY_ENV } from './shopify.ts';

let svc: TestService;
let owner: Session;

beforeAll(async () => {
  svc = await startTestService(SHOPIFY_ENV);
  owner = await signUp(svc, 'Unconfigured');
});
afterAll(() => svc?.stop());

const MESSAGE =
  'Installing on Shopify is not set up on this service: its operator must set SHOPIFY_API_KEY and SHOPIFY_API_SECRET (the Shopify app’s client id and secret)';

describe('Install on Shopify without the app configured', () => {
  it('says what the operator must configure, and refuses to start or finish an install', async () => {
    const settings = await call(svc, 'GET', '/functions/v1/connect-shopify', { token: owner.access_token });
    expect(settings).toMatchObject({ status: 200, json: { configured: false, message: MESSAGE } });
    const started = await call(svc, 'POST', '/functions/v1/connect-shopify/start', {
      token: owner.access_token,
      body: { shop: 'jane-supplies.myshopify.com' },
    });
    expect(started).toMatchObject({
      status: 409,
      json: { error: 'shopify_not_configured', message: MESSAGE, details: {} },
    });
    const finished = await call(svc, 'POST', '/functions/v1/connect-shopify/callback', {
      token: owner.access_token,
      body: {
        query: { shop: 'jane-supplies.myshopify.com', code: 'c', state: 's', hmac: 'h', timestamp: '1' },
      },
    });
    expect(finished).toMatchObject({ status: 409, json: { error: 'shopify_not_configured' } });
    const anonymous = await call(svc, 'GET', '/functions/v1/connect-shopify');
    expect(anonymous.status).toBe(401);
  });
});
