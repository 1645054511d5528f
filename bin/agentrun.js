#!/usr/bin/env node
// The agentrun CLI. TypeScript sources run through tsx, so a checkout works without a build.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv);
// Exit explicitly: Temporal's native runtime keeps handles open after the work is done.
process.stdout.write('', () => process.exit(code));
