import module from 'node:module';
import { ConfigError, loadConfig } from '../config.ts';
import { serviceUrl } from './service-url.ts';

// Each command imports its code when it runs (`await import`), so `svc keys` or `svc --help` does
// not load the HTTP server, the database drivers and the queue first; the bundle `svc` runs keeps
// them in chunks of their own (bin/build.mjs).

const USAGE = `usage: svc <command>

  start                         run the service (default); one per DATA_DIR on the embedded database
  worker                        run the job worker alone (any number against one PostgreSQL)
  migrate                       apply pending database migrations (refused while a service runs on DATA_DIR)
  keys                          print {"url","anon_key","service_role_key"} as one JSON line (url: the running service's)
  org set-plan <org_id> <plan>  move an organization to free | starter | growth | scale
  webhooks replay <id>|--failed process a webhook event again, or every failed and rejected one
  purge                         delete what is older than each organization's data retention now; prints counts
  backup <file>                 the embedded database, keys and stored files in one file (0600), service running or not
  restore <file>                a backup into an empty DATA_DIR (refused while a service runs there)
  dev fake-graph [--port N]     run a local fake of Meta's Graph API (development only); prints its URL
  dev fake-shopify [--port N]   run a local fake of Shopify (install, shop, webhooks; development only)
  dev fake-stripe [--port N]    run a local fake of Stripe (development only); prints the settings to use

Configuration comes from the environment: see README.md.`;

async function main(argv: string[]): Promise<number> {
  const [command = 'start', ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    case 'start': {
      // The embedded engine's WebAssembly compiles off the main thread while the code below loads.
      if (!config.databaseUrl)
        void import('../platform/db/pglite-wasm.ts').then((m) => m.pgliteModule()).catch(() => {});
      const [{ startService }, { exitOnCrash }, { createLogger }] = await Promise.all([
        import('../main.ts'),
        import('./crash.ts'),
        import('../platform/log.ts'),
      ]);
      // Its worker runs inline (WORKER=inline): a crash is recorded on the jobs it held (crash.ts).
      exitOnCrash(createLogger(config.logLevel));
      const service = await startService(config);
      const { anonKey } = service.services.keys;
      const stop = async () => {
        await service.close();
        process.exit(0);
      };
      // Before announcing readiness: a supervisor may signal the moment it reads the line.
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      process.stdout.write(`svc listening on ${service.url}\nanon key: ${anonKey}\n`);
      // The compile cache (bin/build.mjs) written now, not only at exit: a service that is killed
      // outright still leaves it for the next start. Only what was compiled afresh is written.
      (module as { flushCompileCache?: () => void }).flushCompileCache?.(); // Node 22.10+
      return -1; // keep running
    }
    case 'worker': {
      const [{ startWorker }, { exitOnCrash }, { createLogger }] = await Promise.all([
        import('./worker.ts'),
        import('./crash.ts'),
        import('../platform/log.ts'),
      ]);
      exitOnCrash(createLogger(config.logLevel));
      const stop = await startWorker(config);
      const exit = async () => {
        await stop();
        process.exit(0);
      };
      process.once('SIGTERM', exit);
      process.once('SIGINT', exit);
      process.stdout.write('svc worker running\n');
      return -1; // keep running
    }
    case 'migrate': {
      const [{ openForCommand }, { migrate }] = await Promise.all([
        import('./running-service.ts'),
        import('../platform/db/migrate.ts'),
      ]);
      const db = await openForCommand(config, 'migrate');
      try {
        const applied = await migrate(db);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'nothing to apply\n');
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'keys': {
      const { loadSigningKeys } = await import('../auth/signing-keys.ts');
      const keys = await loadSigningKeys(config.dataDir, config.jwtPrivateKey);
      process.stdout.write(
        `${JSON.stringify({ url: serviceUrl(config), anon_key: keys.anonKey, service_role_key: keys.serviceRoleKey })}\n`,
      );
      return 0;
    }
    case 'org':
      if (rest[0] === 'set-plan' && rest[1] && rest[2])
        return (await import('./org-set-plan.ts')).setPlanCommand(config, rest[1], rest[2]);
      break;
    case 'webhooks':
      if (rest[0] === 'replay') return (await import('./webhooks-replay.ts')).replayCommand(config, rest[1]);
      break;
    case 'purge':
      return (await import('./purge.ts')).purgeCommand(config, rest);
    case 'backup':
      return (await import('./backup.ts')).backupCommand(config, rest);
    case 'restore':
      return (await import('./restore.ts')).restoreCommand(config, rest);
    case 'dev':
      // Loaded only here: a running service never has the fake in its process.
      if (rest[0] === 'fake-graph')
        return (await import('./dev-fake-graph.ts')).fakeGraphCommand(rest.slice(1));
      if (rest[0] === 'fake-shopify')
        return (await import('./dev-fake-shopify.ts')).fakeShopifyCommand(rest.slice(1));
      if (rest[0] === 'fake-stripe')
        return (await import('./dev-fake-stripe.ts')).fakeStripeCommand(config, rest.slice(1));
      break;
    case 'help':
    case '--help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
  }
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`svc: ${err instanceof ConfigError ? err.message : (err as Error).message}\n`);
    process.exit(1);
  },
);
