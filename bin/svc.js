#!/usr/bin/env node
// The `svc` command. TypeScript runs as-is through tsx: no build step between clone and start.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
