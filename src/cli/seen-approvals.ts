// What the operator last saw waiting for approval, per conversation: `agentrun pending` records
// it, and `approve`/`deny` without --call decide exactly that call, so a call that changed since
// (the model moved on, another operator decided) is refused instead of approved blind.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { agentrunHome } from '../infra/home.js';

const file = () => join(agentrunHome(), 'seen-approvals.json');

async function load(): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(file(), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

/** Remember the call ids `pending` showed (conversation id → call id). */
export async function recordSeenApprovals(seen: Record<string, string>): Promise<void> {
  if (!Object.keys(seen).length) return;
  const all = { ...(await load()), ...seen };
  const path = file();
  await mkdir(dirname(path), { recursive: true });
  // Written whole and renamed: two CLIs at once never leave a torn file. Readable by the owner only.
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(all), { mode: 0o600 });
  await rename(tmp, path);
}

/** The call id `pending` last showed for this conversation, if any. */
export async function seenApproval(conversationId: string): Promise<string | undefined> {
  return (await load())[conversationId];
}
