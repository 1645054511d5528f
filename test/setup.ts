// Runs in every test file: its temporary directories go when the file ends, after its own
// afterAll hooks (hooks run in stack order, and this one is registered first).
import { afterAll } from 'vitest';
import { removeTempDirs } from './helpers/temp.js';

afterAll(removeTempDirs);
