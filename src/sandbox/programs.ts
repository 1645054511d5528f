// The programs the worker itself starts around a command (bwrap, and setpriv as its first program
// inside) run by absolute path, found once on the worker's own PATH when it starts: an environment
// a settings file or a conversation shapes never decides which binary the worker runs.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export interface SandboxPrograms {
  /** Absolute paths, or undefined when the program is not installed. */
  bwrap?: string;
  setpriv?: string;
}

let resolved: SandboxPrograms | undefined;

/** `name` on `searchPath`, absolute directories only (a relative entry would be the current directory's). */
export function findProgram(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const file = path.join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** bwrap and setpriv, resolved on the first call (the worker's start check) and never again. */
export function sandboxPrograms(): SandboxPrograms {
  resolved ??= { bwrap: findProgram('bwrap', process.env.PATH), setpriv: findProgram('setpriv', process.env.PATH) };
  return resolved;
}

/** bwrap's absolute path, or an error naming what to do. */
export function bwrapPath(): string {
  const bwrap = sandboxPrograms().bwrap;
  if (!bwrap) throw new Error("bwrap is not installed (not found on the worker's PATH at start); install bubblewrap (apt-get install bubblewrap)");
  return bwrap;
}
