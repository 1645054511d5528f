#!/usr/bin/env node
// The agentrun CLI from the TypeScript sources of a checkout, through tsx (a dev dependency):
// `npm run dev:cli -- run --task …`. The published package runs bin/agentrun.js (compiled).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv);
process.stdout.write('', () => process.exit(code));
