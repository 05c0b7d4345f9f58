#!/usr/bin/env node
// The `svc` command: runs the JavaScript bundle of src/ (dist/svc.mjs, built by bin/build.mjs at
// install), rebuilt first only when the sources are newer, as in a checkout being edited.
import { pathToFileURL } from 'node:url';
import { BUNDLE, build, stale } from './build.mjs';

if (stale()) await build();
await import(pathToFileURL(BUNDLE).href);
