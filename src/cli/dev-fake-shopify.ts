// `svc dev fake-shopify [--port N] [--host H] [--shop DOMAIN=OWNER[:TOKEN:SECRET] …] [--app KEY:SECRET]`:
// the fake Shopify (src/dev/fake-shopify) on its own, for running the service and the dashboard
// against it in development. Prints its SHOPIFY_SHOP_URL, then one line per request; never a token.
import { type FakeShop, startFakeShopify } from '../dev/fake-shopify/server.ts';

export async function fakeShopifyCommand(args: string[]): Promise<number> {
  let port = 0;
  let host = '127.0.0.1';
  let app = { apiKey: 'dev-shopify-api-key', apiSecret: 'dev-shopify-api-secret' };
  const shops: Record<string, FakeShop> = {};
  for (let i = 0; i < args.length; i++) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--port' && value && /^\d+$/.test(value) && Number(value) <= 65535) port = Number(value);
    else if (flag === '--host' && value) host = value;
    else if (flag === '--app' && value) {
      const m = /^([^:]+):(.+)$/.exec(value);
      if (!m) return usage('--app takes KEY:SECRET');
      app = { apiKey: m[1] as string, apiSecret: m[2] as string };
    } else if (flag === '--shop' && value) {
      const m = /^([a-z0-9][a-z0-9-]*\.myshopify\.com)=([^:]+)(?::([^:]+):(.+))?$/.exec(value);
      if (!m) return usage('--shop takes DOMAIN=OWNER or DOMAIN=OWNER:TOKEN:SECRET (a custom app)');
      shops[m[1] as string] = {
        owner: m[2] as string,
        ...(m[3] ? { customApps: [{ token: m[3], secret: m[4] as string }] } : {}),
      };
    } else return usage(`unknown or incomplete option: ${flag}`);
    i++;
  }
  if (!Object.keys(shops).length) shops['dev-shop.myshopify.com'] = { owner: 'owner@dev-shop.test' };
  const fake = await startFakeShopify({
    port,
    host,
    app,
    shops,
    onRequest: (r) => process.stdout.write(`${r.method} /${r.shop ?? ''}${r.path} -> ${r.status}\n`),
  });
  const stop = async () => {
    await fake.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(
    `fake shopify listening on ${fake.url}\n` +
      `point the service at it: SHOPIFY_SHOP_URL=${fake.shopUrl} SHOPIFY_API_KEY=${app.apiKey} SHOPIFY_API_SECRET=<the --app secret>\n` +
      `shops: ${Object.keys(shops).join(', ')}\n`,
  );
  return -1; // keep running
}

function usage(problem: string): number {
  process.stderr.write(
    `svc dev fake-shopify: ${problem}\nusage: svc dev fake-shopify [--port N] [--host H] [--app KEY:SECRET] [--shop DOMAIN=OWNER[:TOKEN:SECRET]]…\n`,
  );
  return 2;
}
