// The layers of src/ and the direction of their imports (docs/decisions.md, "One direction of
// dependencies"): each layer imports only itself and the layers below it, and no file imports
// itself back through others. Type-only imports count: a type shared both ways couples the files
// as much as a value does. `npm run lint:deps` checks it; .ci/run runs it.
//
//   cli → main/app → URL spaces → jobs → domain → integrations (src/channels) → config → platform
//   src/dev (the fake servers) is reached only from src/cli, and imports only platform.

// Folders and top-level files of each layer, as path patterns relative to the project.
const CLI = '^src/cli/';
const APP = '^src/(main|app)\\.ts$';
const SURFACES = '^src/(auth|rest|functions|mcp|oauth|storage|realtime|dashboard)/|^src/services\.ts$';
const JOBS = '^src/jobs/';
const DOMAIN = '^src/domain/';
const INTEGRATIONS = '^src/channels/';
const CONFIG = '^src/config\\.ts$';
const PLATFORM = '^src/platform/';
const DEV = '^src/dev/';

const exact = (paths) => `^(${paths.map((p) => p.replace(/[.]/g, '\\.')).join('|')})$`;

/** A layer may not import the layers above it. */
const notUp = (name, from, above, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: above },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A circle of imports (type-only ones too) makes its files one unit: break it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    notUp('not-to-cli', '^src/(?!cli/)', CLI, 'Only the `svc` command is above everything.'),
    notUp(
      'not-to-app',
      `^src/(?!cli/|(main|app)\\.ts$)`,
      APP,
      'main.ts and app.ts put the service together; nothing they build names them.',
    ),
    notUp(
      'not-to-surfaces',
      `${JOBS}|${DOMAIN}|${INTEGRATIONS}|${CONFIG}|${PLATFORM}`,
      SURFACES,
      'The URL spaces call jobs, domain and below; nothing below knows a route (pass a function in).',
    ),
    notUp(
      'not-to-jobs',
      `${DOMAIN}|${INTEGRATIONS}|${CONFIG}|${PLATFORM}`,
      JOBS,
      'Jobs run domain code, not the other way.',
    ),
    notUp(
      'not-to-domain',
      `${INTEGRATIONS}|${CONFIG}|${PLATFORM}`,
      DOMAIN,
      'Integrations parse into plain types of their own; the domain maps them to its rules.',
    ),
    notUp(
      'not-to-integrations',
      `${CONFIG}|${PLATFORM}`,
      INTEGRATIONS,
      'The outside world’s clients sit above the machinery.',
    ),
    notUp(
      'not-to-config',
      PLATFORM,
      CONFIG,
      'Platform takes its settings as arguments, never from config.ts.',
    ),
    notUp(
      'dev-only-from-cli',
      '^src/(?!cli/|dev/)',
      DEV,
      'The fake servers are development tools: only `svc dev …` starts them.',
    ),
    {
      name: 'dev-imports-platform-only',
      comment: 'The fake servers stand for the outside world: they know our machinery, never our rules.',
      severity: 'error',
      from: { path: DEV },
      to: { path: '^src/', pathNot: `${DEV}|${PLATFORM}` },
    },
    {
      name: 'in-a-layer',
      comment: 'Every file of src/ belongs to a layer above (a new top-level file or folder: give it one).',
      severity: 'error',
      from: { path: '^src/' },
      to: {
        path: '^src/',
        pathNot: [CLI, APP, SURFACES, JOBS, DOMAIN, INTEGRATIONS, CONFIG, PLATFORM, DEV].join('|'),
      },
    },
    {
      name: 'src-not-to-tests',
      comment: 'The service never imports its tests or benchmarks.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    // Type-only imports are dependencies too (see no-circular).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^web/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
