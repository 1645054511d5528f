// `npm run docs:config`: write docs/configuration.md from the settings tables (src/cli/settings.ts).
import { writeFileSync } from 'node:fs';
import { buildProgram } from '../src/cli/main.js';
import { configurationReference } from '../src/cli/settings-doc.js';

const file = new URL('../docs/configuration.md', import.meta.url);
writeFileSync(file, configurationReference(buildProgram(() => undefined)));
console.log(`wrote ${file.pathname}`);
