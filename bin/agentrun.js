#!/usr/bin/env node
// The agentrun CLI, compiled (`npm run build` writes dist/; `npm ci` in a checkout runs it).
// From a checkout without a build, `npm run dev:cli -- …` runs the TypeScript sources instead.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('agentrun: this checkout is not built: run `npm run build` (or `npm run dev:cli -- …` to run the sources)\n');
  process.exit(2);
}
// The workflow bundle made at build time saves the worker a few seconds of bundling at start.
const bundle = fileURLToPath(new URL('../dist/workflow-bundle.js', import.meta.url));
if (!process.env.AGENTRUN_WORKFLOW_BUNDLE && existsSync(bundle)) process.env.AGENTRUN_WORKFLOW_BUNDLE = bundle;
const { main } = await import(entry.href);
const code = await main(process.argv);
// Exit explicitly: Temporal's native runtime keeps handles open after the work is done.
process.stdout.write('', () => process.exit(code));
