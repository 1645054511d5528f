// The bubblewrap command line for one command. The root file system is built from an allowlist
// (what builds need: /usr, the /bin and /lib links, /etc without its secrets, and the toolchain
// paths the operator names), never `/` minus a list; the workspace read-write (or read-only); a
// private /tmp, /dev and /proc in new namespaces; no network unless asked; no capabilities. When
// the worker runs as root, the command runs as the unprivileged sandbox user (src/sandbox/owner.ts).
import { accessSync, constants, lstatSync, readFileSync, readlinkSync, realpathSync, statSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandLimits } from './limits.js';
import { sandboxUser, type SandboxUser } from './owner.js';
import { SANDBOX_WORKSPACE, type SandboxSettings } from './policy.js';
import { bwrapPath, sandboxPrograms } from './programs.js';

/** The fake HOME of a command, inside its private /tmp. */
export const SANDBOX_HOME = '/tmp/home';

/** The system part of the root: bound read-only where it is a directory, recreated where it is a link (/bin → usr/bin). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** Files and directories of /etc that hold secrets: password hashes, host keys, agentrun's own (TLS keys), certbot's site keys, sudo rules. */
const ETC_SECRET_FILES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/security/opasswd'];
const ETC_SECRET_DIRS = ['/etc/ssh', '/etc/agentrun', '/etc/ssl/private', '/etc/letsencrypt', '/etc/sudoers.d', '/etc/postgresql', '/etc/kubernetes'];

/** Toolchain directories the operator adds to the root (`agentrun worker --sandbox-path DIR`, AGENTRUN_SANDBOX_PATHS). */
function operatorPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.AGENTRUN_SANDBOX_PATHS ?? '')
    .split(/[:,]/)
    .map((p) => p.trim())
    .filter((p) => path.isAbsolute(p) && p !== '/')
    .map((p) => path.resolve(p));
}

/**
 * Directories a command must not see even where they lie inside a bound path: homes (SSH keys,
 * git credentials, cloud configs), AGENTRUN_HOME (dev.json, private checkpoint repositories,
 * server data) and the other workspaces of this host.
 */
function hiddenDirs(settings: SandboxSettings, env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = ['/root', '/home', '/run', '/var/run', '/var/lib/agentrun', os.homedir()];
  if (settings.home) dirs.push(settings.home);
  if (env.AGENTRUN_HOME) dirs.push(env.AGENTRUN_HOME);
  if (env.AGENTRUN_WORKSPACES) dirs.push(env.AGENTRUN_WORKSPACES);
  const out: string[] = [];
  for (const d of dirs) {
    const abs = path.resolve(d);
    // /tmp is private anyway; the root cannot be hidden; a symlink (/var/run → /run) is covered by its target.
    if (abs === '/' || abs === '/tmp' || abs.startsWith('/tmp/') || !isRealDir(abs) || out.includes(abs)) continue;
    out.push(abs);
  }
  // Parents before children, so a child's tmpfs is not itself hidden by its parent's.
  return out.sort((a, b) => a.length - b.length);
}

/** A directory that is not a symlink (a symlink's target is hidden under its own name). */
function isRealDir(p: string): boolean {
  try {
    // The native realpath: one call where the JS one lstats each component (every command builds this).
    return statSync(p).isDirectory() && realpathSync.native(p) === p;
  } catch {
    return false;
  }
}

/** A host path inside the workspace as the sandbox sees it (under SANDBOX_WORKSPACE). */
function inSandbox(workspace: string, hostPath: string): string {
  const rel = path.relative(workspace, hostPath);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new Error(`${hostPath} is not inside the workspace ${workspace}`);
  return rel ? path.posix.join(SANDBOX_WORKSPACE, ...rel.split(path.sep)) : SANDBOX_WORKSPACE;
}

function inside(parent: string, p: string): boolean {
  return p === parent || p.startsWith(parent + path.sep);
}

/**
 * Whether the command could read the file `f` by its permissions: a root worker's commands run as
 * `user` with no supplementary group, another worker's as the worker itself. Errs towards yes.
 */
function readableBy(f: string, st: Stats, user: SandboxUser | undefined): boolean {
  if (!user) {
    try {
      accessSync(f, constants.R_OK);
      return true;
    } catch {
      return false;
    }
  }
  return (st.mode & 0o004) !== 0 || (st.uid === user.uid && (st.mode & 0o400) !== 0) || (st.gid === user.gid && (st.mode & 0o040) !== 0);
}

/**
 * The allowlisted root: each system or operator path as a read-only bind, or as the link it is.
 * A secret file is covered by an empty one where the command could read it; where its permissions
 * already keep the command out (the usual 0640 root:shadow), the cover would change nothing and
 * costs bwrap a bind mount (about 0.8 ms of CPU each, every command).
 */
export function rootArgs(env: NodeJS.ProcessEnv = process.env, user: SandboxUser | undefined = sandboxUser(env)): { args: string[]; bound: string[] } {
  const args: string[] = [];
  const bound: string[] = [];
  for (const p of [...SYSTEM_PATHS, ...operatorPaths(env)]) {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(p), p);
    else if (st.isDirectory()) {
      args.push('--ro-bind', p, p);
      bound.push(p);
    }
  }
  for (const f of ETC_SECRET_FILES) {
    const st = lstatSync(f, { throwIfNoEntry: false });
    if (st?.isFile() && readableBy(f, st, user)) args.push('--ro-bind', '/dev/null', f);
  }
  for (const d of ETC_SECRET_DIRS) if (isRealDir(d)) args.push('--tmpfs', d);
  return { args, bound };
}

export interface BwrapPlan {
  /** The workspace root (a real path). */
  workspace: string;
  settings: SandboxSettings;
  limits: CommandLimits;
  /** Where the command starts (inside the workspace); default the workspace. */
  chdir?: string;
  /** The sandbox user the command becomes (the worker is root); default from the worker's settings. */
  user?: SandboxUser | null;
  /** More directories, each bound at `dest` under the sandbox's private /tmp (the dependency cache's entry). */
  binds?: SandboxBind[];
}

export interface SandboxBind {
  source: string;
  /** A path under /tmp. */
  dest: string;
  readOnly: boolean;
}

/**
 * Namespaces and privileges: unprivileged bwrap makes a user namespace; bwrap run by root keeps
 * only what switching to the sandbox user needs. The network namespace is always new (only its
 * own loopback): a network, when allowed, is the egress proxy listening on that loopback, never the worker's.
 */
function isolationArgs(user: SandboxUser | undefined): string[] {
  if (!user) return ['--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL'];
  return [
    '--unshare-ipc',
    '--unshare-pid',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--unshare-net',
    '--cap-drop',
    'ALL',
    // setpriv needs these to become the sandbox user (and --chdir to enter its 0700 workspace);
    // they go with the switch: a process whose uids are all non-zero holds no capabilities.
    '--cap-add',
    'CAP_SETUID',
    '--cap-add',
    'CAP_SETGID',
    '--cap-add',
    'CAP_DAC_READ_SEARCH',
  ];
}

function bwrapArgs(plan: BwrapPlan): string[] {
  const { workspace, settings, limits } = plan;
  const user = plan.user === undefined ? sandboxUser() : (plan.user ?? undefined);
  const root = rootArgs(process.env, user);
  const args = [
    ...isolationArgs(user),
    '--die-with-parent',
    '--new-session',
    // /dev and /proc first: bwrap reads the whole mount table after each bind it makes (--dev
    // makes six), so the fewer mounts are in it by then, the less every command pays.
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    ...root.args,
    // World-writable as a /tmp is: the sandbox user is not the one who mounts it.
    '--perms',
    '1777',
    '--size',
    String(limits.tmpBytes),
    '--tmpfs',
    '/tmp',
    '--perms',
    '0777',
    '--dir',
    SANDBOX_HOME,
  ];
  for (const dir of hiddenDirs(settings)) if (root.bound.some((b) => inside(b, dir))) args.push('--tmpfs', dir);
  // The workspace at one fixed path, whatever its path on the host: absolute paths setup wrote
  // there stay true for the next job that gets them from the dependency cache.
  args.push(settings.policy === 'read-only' ? '--ro-bind' : '--bind', workspace, SANDBOX_WORKSPACE);
  for (const b of plan.binds ?? []) {
    if (!b.dest.startsWith('/tmp/')) throw new Error(`a sandbox bind goes under /tmp, not ${b.dest}`);
    args.push(b.readOnly ? '--ro-bind' : '--bind', b.source, b.dest);
  }
  args.push('--chdir', inSandbox(workspace, plan.chdir ?? workspace));
  return args;
}

/** The first field of the first line of an /etc database whose third field is `id` (a name for it), or undefined. */
function nameFor(db: string, id: number): string | undefined {
  const lines = db.split('\n').map((l) => l.split(':'));
  const line = lines.find((f) => f.length > 2 && f[2] === String(id));
  const name = line?.[0];
  // getpwnam / getgrnam return the first line of that name: it must be this id's.
  return name && lines.find((f) => f[0] === name)?.[2] === String(id) ? name : undefined;
}

/**
 * How setpriv is told the ids. setpriv looks every value up as a name first (a number too), and a
 * name the files do not hold goes on to the next NSS module (libnss_systemd: loading it is about
 * 0.7 ms of CPU, every command). Where NSS reads the files first, the name the files give the id
 * (when that name leads back to it) finds it there; otherwise the number, as before. The sandbox
 * sees the same /etc, bound read-only.
 */
function setprivIds(user: SandboxUser): { uid: string; gid: string } {
  const ids = { uid: String(user.uid), gid: String(user.gid) };
  try {
    const nss = readFileSync('/etc/nsswitch.conf', 'utf8');
    const filesFirst = (db: string) => new RegExp(`^${db}:\\s*files(\\s|$)`, 'm').test(nss);
    if (!filesFirst('passwd') || !filesFirst('group')) return ids;
    return { uid: nameFor(readFileSync('/etc/passwd', 'utf8'), user.uid) ?? ids.uid, gid: nameFor(readFileSync('/etc/group', 'utf8'), user.gid) ?? ids.gid };
  } catch {
    return ids;
  }
}

/**
 * The whole argv of a sandboxed command: bwrap, then (as root) the switch to the sandbox user, then
 * the command. bwrap and setpriv by the absolute paths found at the worker's start
 * (src/sandbox/programs.ts); `bwrap` overrides the first (the start check's probe of another one).
 */
export function sandboxArgv(plan: BwrapPlan, command: string[], bwrap?: string): string[] {
  const user = plan.user === undefined ? sandboxUser() : (plan.user ?? undefined);
  const setpriv = sandboxPrograms().setpriv ?? '/usr/bin/setpriv';
  const ids = user && setprivIds(user);
  const become = ids ? [setpriv, `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--inh-caps=-all', '--'] : [];
  return [bwrap ?? bwrapPath(), ...bwrapArgs({ ...plan, user: user ?? null }), '--', ...become, ...command];
}
