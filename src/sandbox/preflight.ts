// The worker's start check: a worker that cannot sandbox commands refuses to start, rather
// than running the agent's commands unconfined without anyone having asked for it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sandboxArgv } from './bwrap.js';
import { handToSandbox } from './owner.js';
import { DEFAULT_LIMITS } from './limits.js';
import { DEFAULT_SANDBOX } from './policy.js';
import { sandboxPrograms } from './programs.js';

const SANDBOX_HELP =
  'install bubblewrap (apt-get install bubblewrap) and allow user namespaces (kernel: sysctl user.max_user_namespaces>0 and kernel.unprivileged_userns_clone=1; container: a seccomp/AppArmor profile that permits unshare and mount, see docs/deploy.md), or start the worker with --sandbox off to run commands unconfined (the container is then the only boundary)';

export interface SandboxProbe {
  ok: boolean;
  /** Why not, in one line, with what to do. */
  error?: string;
}

const cache = new Map<string, SandboxProbe>();

/** Run `true` in the same sandbox a command gets; memoized per process. */
export function probeSandbox(given?: string): SandboxProbe {
  // The bwrap found on the worker's PATH at its start; a name not found there is one that is not installed.
  const bwrap = given ?? sandboxPrograms().bwrap ?? '/nonexistent/bwrap';
  const known = cache.get(bwrap);
  if (known) return known;
  let cached: SandboxProbe;
  const ws = mkdtempSync(path.join(os.tmpdir(), 'agentrun-probe-'));
  try {
    handToSandbox(ws);
    const [, ...args] = sandboxArgv({ workspace: ws, settings: DEFAULT_SANDBOX, limits: DEFAULT_LIMITS }, ['/bin/true'], bwrap);
    // A fixed environment: bwrap is told nothing of the worker's.
    const r = spawnSync(bwrap, args, {
      encoding: 'utf8',
      timeout: 10_000,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' },
    });
    if (r.error) {
      const why = (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'bwrap is not installed' : `bwrap could not run (${r.error.message})`;
      cached = { ok: false, error: `agentrun: commands cannot be sandboxed: ${why}; ${SANDBOX_HELP}.` };
    } else if (r.status !== 0) {
      const why = (r.stderr || `exit code ${r.status}`).trim().split('\n')[0];
      cached = { ok: false, error: `agentrun: commands cannot be sandboxed: ${why}; ${SANDBOX_HELP}.` };
    } else cached = { ok: true };
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
  cache.set(bwrap, cached);
  return cached;
}

/**
 * Throws when commands cannot be sandboxed, unless the worker was started with `--sandbox off`
 * (or AGENTRUN_SANDBOX=off). The one line is the worker's exit message.
 */
export function assertSandboxUsable(opts: { sandbox?: string } = {}): void {
  // The launcher's programs are found now, at the worker's start, on its own PATH.
  sandboxPrograms();
  const off = (opts.sandbox ?? process.env.AGENTRUN_SANDBOX) === 'off';
  if (off) return;
  const probe = probeSandbox();
  if (!probe.ok) throw new Error(probe.error);
}

/**
 * Whether this worker runs a conversation's `sandbox: off`: only when its operator said so, by
 * starting it with `--sandbox off` (AGENTRUN_SANDBOX=off: nothing is sandboxed on it anyway) or
 * `--allow-unsandboxed` (AGENTRUN_ALLOW_UNSANDBOXED=1).
 */
export function unsandboxedAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.AGENTRUN_SANDBOX === 'off' || ['1', 'true', 'yes', 'on'].includes((env.AGENTRUN_ALLOW_UNSANDBOXED ?? '').trim().toLowerCase());
}
