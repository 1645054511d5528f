// `node --import ./record-imports.mjs …`: appends every module URL the program resolves to the file
// named by RECORD_IMPORTS (one per line), so a test can tell what a command loaded.
import { register } from 'node:module';

register('./record-imports-hooks.mjs', import.meta.url, { data: { file: process.env.RECORD_IMPORTS } });
