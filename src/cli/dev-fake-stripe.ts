// `svc dev fake-stripe [--port N] [--host H] [--webhook-url URL]`: the fake Stripe
// (src/dev/fake-stripe) on its own, for running the service against it in development. The keys
// come from the environment the service reads too (STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET), so
// both sides agree; prints the settings to give the service, then one line per API request.
import type { Config } from '../config.ts';
import { startFakeStripe } from '../dev/fake-stripe/server.ts';
import { defaultPrices } from '../dev/fake-stripe/state.ts';

export async function fakeStripeCommand(config: Config, args: string[]): Promise<number> {
  let port = 0;
  let host = '127.0.0.1';
  let webhookUrl: string | undefined;
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--port' && value && /^\d+$/.test(value) && Number(value) <= 65535) port = Number(value);
    else if (flag === '--host' && value) host = value;
    else if (flag === '--webhook-url' && value && /^https?:\/\//.test(value)) webhookUrl = value;
    else return usage(`unknown or incomplete option: ${flag}`);
  }
  const secretKey = config.billing?.secretKey ?? 'sk_test_fake';
  const webhookSecret = config.billing?.webhookSecret ?? 'whsec_fake';
  const fake = await startFakeStripe({
    port,
    host,
    secretKey,
    webhookSecret,
    webhookUrl: webhookUrl ?? `http://127.0.0.1:${config.port}/functions/v1/stripe-webhook`,
    onRequest: (r) => process.stdout.write(`${r.method} ${r.path} -> ${r.status}\n`),
  });
  const stop = async () => {
    await fake.close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const price = (kind: string, plan: string) =>
    defaultPrices().find((p) => p.metadata.kind === kind && p.metadata.plan === plan)?.id;
  const settings = [
    `STRIPE_API_URL=${fake.url}`,
    ...(config.billing ? [] : ['STRIPE_SECRET_KEY=sk_test_fake', 'STRIPE_WEBHOOK_SECRET=whsec_fake']),
    ...['starter', 'growth', 'scale'].flatMap((plan) => [
      `STRIPE_PRICE_${plan.toUpperCase()}=${price('plan', plan)}`,
      `STRIPE_PRICE_AGENT_${plan.toUpperCase()}=${price('agent', plan)}`,
    ]),
  ];
  process.stdout.write(
    `fake stripe listening on ${fake.url}; events go to ${fake.webhookUrl}\n` +
      `point the service at it:\n  ${settings.join(' \\\n  ')}\n`,
  );
  return -1; // keep running
}

function usage(problem: string): number {
  process.stderr.write(
    `svc dev fake-stripe: ${problem}\nusage: svc dev fake-stripe [--port N] [--host H] [--webhook-url URL]\n`,
  );
  return 2;
}
