// Placement by identity: a local workspace is the directory a host placed, not
// whatever sits at that path. At placement the host writes a marker (conversation id, machine id,
// the directory's device, inode and birth time) into the workspace's private git directory under its
// AGENTRUN_HOME; a host keeps or uses a directory for a conversation only where that marker
// matches: another machine (or AGENTRUN_HOME) that sees the same path, or another tree put at the
// path since, declines it.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { privateGitDir } from './checkpoint.js';

const machineIds = new Map<string, Promise<string>>();

/**
 * AGENTRUN_MACHINE_ID, else an id generated once in `$AGENTRUN_HOME/machine-id`. Not
 * /etc/machine-id: checkpoints live under AGENTRUN_HOME, so two workers with their own homes are
 * two hosts even on one machine, and container images often share one /etc/machine-id.
 */
export function machineId(home: string): Promise<string> {
  const fromEnv = process.env.AGENTRUN_MACHINE_ID?.trim();
  if (fromEnv) return Promise.resolve(fromEnv);
  let id = machineIds.get(home);
  if (!id) {
    id = (async () => {
      const file = join(home, 'machine-id');
      const kept = (await readFile(file, 'utf8').catch(() => '')).trim();
      if (kept) return kept;
      await mkdir(home, { recursive: true });
      // Written whole, then linked into place, which fails where the file exists: of workers starting
      // at once on a new home the first to land wins and every other one reads its id. (A rename
      // would replace it, and two workers that each read their own would place for ever against each other.)
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      await writeFile(tmp, randomBytes(16).toString('hex') + '\n');
      try {
        await link(tmp, file).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        });
      } finally {
        await unlink(tmp).catch(() => undefined);
      }
      const id = (await readFile(file, 'utf8')).trim();
      if (!id) throw new Error(`${file} is empty: remove it (a new id is made) or set AGENTRUN_MACHINE_ID`);
      return id;
    })();
    id.catch(() => machineIds.delete(home));
    machineIds.set(home, id);
  }
  return id;
}

interface Marker {
  conversationId: string;
  machineId: string;
  workspace: string;
  dev: number;
  ino: number;
  /** Birth time (0 where the file system keeps none): a directory re-created at once often gets the old inode back. */
  born: number;
}

function markerFile(home: string, workspace: string, conversationId: string): string {
  return join(privateGitDir(home, workspace), 'agentrun', 'placed', `${conversationId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
}

/** Record that this host placed `workspace` for `conversationId`. */
export async function markPlacement(home: string, workspace: string, conversationId: string): Promise<void> {
  const { dev, ino, birthtimeMs } = await stat(workspace);
  const marker: Marker = { conversationId, machineId: await machineId(home), workspace, dev, ino, born: birthtimeMs };
  const file = markerFile(home, workspace, conversationId);
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(`${file}.tmp`, JSON.stringify(marker) + '\n');
  await rename(`${file}.tmp`, file);
}

/**
 * A file's version as the file system tells it: device, inode, size, modification and change times
 * (nanoseconds); undefined when it cannot be stat'ed. A file whose version is that of an earlier
 * read holds that read's content (a rewrite by rename is a new inode, one in place a new ctime).
 */
export async function fileVersion(file: string): Promise<string | undefined> {
  const s = await stat(file, { bigint: true }).catch(() => undefined);
  return s && `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/** Markers as last read, with their file's version then (checkPlacement runs on every step of a conversation). */
const markers = new Map<string, { key: string; marker: Marker }>();
const MARKERS_KEPT = 10_000;

/**
 * The marker in `file`, or undefined when there is none. Read again only when the file's version
 * changed (a marker is written to a temporary file and renamed over: a new inode).
 */
async function readMarker(file: string): Promise<Marker | undefined> {
  const key = await fileVersion(file);
  if (!key) {
    markers.delete(file);
    return undefined;
  }
  const kept = markers.get(file);
  if (kept?.key === key) return kept.marker;
  const raw = await readFile(file, 'utf8').catch(() => undefined);
  if (raw === undefined) return undefined;
  const marker = JSON.parse(raw) as Marker;
  if (markers.size >= MARKERS_KEPT) markers.clear();
  markers.set(file, { key, marker });
  return marker;
}

/**
 * Whether `workspace` is the directory this host placed for `conversationId`. `why` when it is not:
 * no marker here (`marked` false: another machine or AGENTRUN_HOME placed it, or it was placed
 * before markers existed), another machine id, or another directory at the path (its device,
 * inode or birth time changed).
 */
export async function checkPlacement(home: string, workspace: string, conversationId: string): Promise<{ marked: boolean; why?: string }> {
  const marker = await readMarker(markerFile(home, workspace, conversationId));
  if (marker === undefined) return { marked: false, why: `this host (AGENTRUN_HOME ${home}) did not place ${workspace} for ${conversationId}` };
  const mine = await machineId(home);
  if (marker.machineId !== mine) return { marked: true, why: `${workspace} was placed by machine ${marker.machineId}, this is ${mine}` };
  const now = await stat(workspace).catch(() => undefined);
  if (!now) return { marked: true, why: `${workspace} is gone` };
  if (now.dev !== marker.dev || now.ino !== marker.ino || now.birthtimeMs !== marker.born)
    return { marked: true, why: `${workspace} is another directory than the one placed there (replaced since)` };
  return { marked: true };
}

/**
 * Where a conversation on a local workspace was started: the machine of the
 * client that started it and the directory's device, inode and birth time there. Its first
 * placement goes only to a host on that machine that sees that very directory, never to another
 * machine that has a tree at the same path.
 */
export interface WorkspaceOrigin {
  machine: string;
  dev: number;
  ino: number;
  born: number;
}

/**
 * The machine, as the client that starts a conversation and the workers on that machine both see
 * it: AGENTRUN_MACHINE_ID when set (set it alike for both), else the OS's machine id and host name
 * (containers sharing an image's /etc/machine-id still differ by host name).
 */
function originMachine(): string {
  const fromEnv = process.env.AGENTRUN_MACHINE_ID?.trim();
  if (fromEnv) return fromEnv;
  let os = '';
  for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      os = readFileSync(file, 'utf8').trim();
      if (os) break;
    } catch {
      // not there: the next, else the host name alone
    }
  }
  return `${os || 'no-machine-id'}@${hostname()}`;
}

/** The origin of `workspace` as seen here; undefined when the path is not a directory here (the client runs elsewhere). */
export async function workspaceOrigin(workspace: string): Promise<WorkspaceOrigin | undefined> {
  const st = await stat(workspace).catch(() => undefined);
  if (!st?.isDirectory()) return undefined;
  return { machine: originMachine(), dev: st.dev, ino: st.ino, born: st.birthtimeMs };
}

/** Why `workspace` here is not the directory of `origin` (another machine, or another directory at the path), or undefined. */
export async function originMismatch(workspace: string, origin: WorkspaceOrigin): Promise<string | undefined> {
  const here = originMachine();
  if (origin.machine !== here) return `it was started on machine ${origin.machine}, this is ${here}`;
  const st = await stat(workspace).catch(() => undefined);
  if (!st) return `${workspace} is gone`;
  if (st.dev !== origin.dev || st.ino !== origin.ino || st.birthtimeMs !== origin.born)
    return `${workspace} is another directory than the one it was started with (replaced since)`;
  return undefined;
}
