// The bubblewrap command line for one command: the root file system read-only, the workspace
// read-write (or read-only), a private /tmp, /dev and /proc in new namespaces, no network
// unless asked, no capabilities, and the places that hold the worker's secrets hidden.
import { existsSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandLimits } from './limits.js';
import type { SandboxSettings } from './policy.js';

/** The fake HOME of a command, inside its private /tmp. */
export const SANDBOX_HOME = '/tmp/home';

/**
 * Directories a command must not see, hidden under an empty tmpfs: homes (SSH keys, git
 * credentials, cloud configs), runtime secrets (/run/secrets, sockets), AGENTRUN_HOME (dev.json,
 * private checkpoint repositories, server data) and the other workspaces of this host.
 */
export function hiddenDirs(settings: SandboxSettings, env: NodeJS.ProcessEnv = process.env): string[] {
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
    return statSync(p).isDirectory() && realpathSync(p) === p;
  } catch {
    return false;
  }
}

export interface BwrapPlan {
  /** The workspace root (a real path). */
  workspace: string;
  settings: SandboxSettings;
  limits: CommandLimits;
  /** Paths inside the workspace that stay read-only even under workspace-write (the checkpoint refs). */
  readOnlyInside?: string[];
}

export function bwrapArgs(plan: BwrapPlan): string[] {
  const { workspace, settings, limits } = plan;
  const args = [
    '--unshare-all',
    ...(settings.network === 'on' ? ['--share-net'] : []),
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--size',
    String(limits.tmpBytes),
    '--tmpfs',
    '/tmp',
    '--dir',
    SANDBOX_HOME,
  ];
  for (const dir of hiddenDirs(settings)) args.push('--tmpfs', dir);
  args.push(settings.policy === 'read-only' ? '--ro-bind' : '--bind', workspace, workspace);
  for (const p of plan.readOnlyInside ?? []) if (existsSync(p)) args.push('--ro-bind', p, p);
  args.push('--chdir', workspace);
  return args;
}
