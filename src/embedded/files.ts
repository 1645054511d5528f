// Small JSON state files under AGENTRUN_HOME (written atomically: a reader never sees half a file).
import fs from 'node:fs/promises';

export async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export async function writeJson(file: string, value: unknown, mode = 0o600): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(value, null, 2) + '\n', { mode });
  await fs.rename(tmp, file);
}

export async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
