// Runs in every test file: its temporary directories go when the file ends, after its own
// afterAll hooks (hooks run in stack order, and this one is registered first); and dist/, which
// the processes tests start run, is built from the sources as they are now (test/helpers/dist.ts).
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { ensureBuiltOnce } from './helpers/dist.js';
import { removeTempDirs } from './helpers/temp.js';

// The fixture repositories tests clone live in the temporary directories: the operator-named
// directories local repository jobs may come from (never AGENTRUN_HOME or the workspaces in them).
// The tests' workers (in this process and the ones it starts) serve scripted models from there and
// from the project (its fixtures and examples), and recorded ones.
process.env.AGENTRUN_REPO_DIRS ??= [tmpdir(), '/var/tmp'].join(':');
process.env.AGENTRUN_SCRIPTS_DIR ??= [tmpdir(), '/var/tmp', fileURLToPath(new URL('..', import.meta.url))].join(':');
process.env.AGENTRUN_RECORDED_MODELS ??= 'on';

afterAll(removeTempDirs);
ensureBuiltOnce();
