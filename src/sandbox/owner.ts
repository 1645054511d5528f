// Who a command runs as. A worker running as root (containers, CI) runs every command as an
// unprivileged sandbox user (AGENTRUN_SANDBOX_USER, default `nobody`), so that inside the sandbox
// nothing root could read is readable; the workspace is handed to that user. A worker running as
// any other user is already unprivileged: commands run as it, in a user namespace.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { chownTreeSync, runningAsRoot } from './workspace-owner.js';

export interface SandboxUser {
  uid: number;
  gid: number;
}

/** `NAME`, `UID` or `UID:GID`; names are looked up in /etc/passwd. Throws with one line when it cannot be resolved or is root. */
export function parseSandboxUser(spec: string): SandboxUser {
  const s = spec.trim();
  const numeric = /^(\d+)(?::(\d+))?$/.exec(s);
  let user: SandboxUser | undefined;
  if (numeric) user = { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) };
  else {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.split(':')[0] === s);
    if (line) {
      const [, , uid, gid] = line.split(':');
      user = { uid: Number(uid), gid: Number(gid) };
    }
  }
  if (!user) throw new Error(`sandbox user "${s}" does not exist: give AGENTRUN_SANDBOX_USER as a user name of this machine, a UID or UID:GID`);
  if (user.uid === 0 || user.gid === 0)
    throw new Error(`sandbox user "${s}" is root: commands must run as an unprivileged user; give another AGENTRUN_SANDBOX_USER`);
  return user;
}

let cached: { spec: string; user: SandboxUser } | undefined;

/** The user commands become, or undefined when the worker is not root (commands then run as the worker). */
export function sandboxUser(env: NodeJS.ProcessEnv = process.env): SandboxUser | undefined {
  if (!runningAsRoot()) return undefined;
  const spec = env.AGENTRUN_SANDBOX_USER?.trim() || 'nobody';
  if (cached?.spec !== spec) {
    let user: SandboxUser;
    try {
      user = parseSandboxUser(spec);
    } catch (err) {
      // `nobody` missing from a minimal image: its customary ids.
      if (spec !== 'nobody') throw err;
      user = { uid: 65534, gid: 65534 };
    }
    cached = { spec, user };
  }
  return cached.user;
}

/** Directories that must never be handed to the sandbox user: the root and the system's own. */
const NEVER_HANDED = new Set([
  '/',
  '/usr',
  '/etc',
  '/var',
  '/bin',
  '/sbin',
  '/lib',
  '/lib64',
  '/boot',
  '/opt',
  '/srv',
  '/root',
  '/home',
  '/tmp',
  '/proc',
  '/sys',
  '/dev',
]);

/**
 * Give the workspace to the sandbox user, so its commands can write it (root worker only). The
 * first command of a workspace walks it; later ones find its root owned already (one stat): what
 * the worker writes afterwards takes the owner itself (src/sandbox/workspace-owner.ts).
 */
export function handToSandbox(workspace: string, user: SandboxUser | undefined = sandboxUser()): void {
  if (!user) return;
  const abs = path.resolve(workspace);
  if (NEVER_HANDED.has(abs)) throw new Error(`refusing to run commands in ${abs}: a workspace must be a project directory, not a system directory`);
  const st = statSync(abs);
  if (st.uid === user.uid && st.gid === user.gid) return;
  chownTreeSync(abs, user.uid, user.gid);
}
