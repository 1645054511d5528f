// Runs in every test file: its temporary directories go when the file ends, after its own
// afterAll hooks (hooks run in stack order, and this one is registered first); and dist/, which
// the processes tests start run, is built from the sources as they are now (test/helpers/dist.ts).
import { afterAll } from 'vitest';
import { ensureBuiltOnce } from './helpers/dist.js';
import { removeTempDirs } from './helpers/temp.js';

afterAll(removeTempDirs);
ensureBuiltOnce();
