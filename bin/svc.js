#!/usr/bin/env node
// The `svc` command: runs the JavaScript bundle of src/ (dist/svc.mjs, built by bin/build.mjs at
// install), rebuilt first only when the sources are newer, as in a checkout being edited.
import { pathToFileURL } from 'node:url';
import { BUNDLE, build, stale } from './build.mjs';

// package.json's engines floor, said in words: an older Node fails deep in the bundle otherwise.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(`svc needs Node.js 22.12 or later; this is Node.js ${process.versions.node}.`);
  process.exit(1);
}

if (stale()) await build();
await import(pathToFileURL(BUNDLE).href);
