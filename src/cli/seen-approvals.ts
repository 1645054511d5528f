// What the operator last saw waiting for approval, per conversation: `agentrun pending` records
// it (the call id and the hash of its arguments), and `approve`/`deny` decide exactly that call
// with those arguments, so a call that changed since (the model moved on, another operator
// decided, different arguments) is refused instead of approved blind.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { agentrunHome } from '../runtime/home.js';

export interface SeenApproval {
  callId: string;
  argsHash?: string;
}

const file = () => join(agentrunHome(), 'seen-approvals.json');

async function load(): Promise<Record<string, SeenApproval | string>> {
  try {
    return JSON.parse(await readFile(file(), 'utf8')) as Record<string, SeenApproval | string>;
  } catch {
    return {};
  }
}

/** Remember the calls `pending` showed (conversation id → call id and argsHash). */
export async function recordSeenApprovals(seen: Record<string, SeenApproval>): Promise<void> {
  if (!Object.keys(seen).length) return;
  const all = { ...(await load()), ...seen };
  const path = file();
  await mkdir(dirname(path), { recursive: true });
  // Written whole and renamed: two CLIs at once never leave a torn file. Readable by the owner only.
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(all), { mode: 0o600 });
  await rename(tmp, path);
}

/** The call `pending` last showed for this conversation, if any (files written before argsHash hold just the id). */
export async function seenApproval(conversationId: string): Promise<SeenApproval | undefined> {
  const v = (await load())[conversationId];
  return typeof v === 'string' ? { callId: v } : v;
}
