// AGENTRUN_HOME: where the embedded servers keep their data and `agentrun dev` its state.
import os from 'node:os';
import path from 'node:path';

export function agentrunHome(): string {
  const fromEnv = process.env.AGENTRUN_HOME?.trim();
  if (!fromEnv) return path.join(os.homedir(), '.agentrun');
  // A config file or a quoted shell value can leave "~" unexpanded.
  if (fromEnv === '~' || fromEnv.startsWith('~/')) return path.join(os.homedir(), fromEnv.slice(1));
  return path.resolve(fromEnv);
}

/** Where this host keeps dependency caches: AGENTRUN_CACHE_DIR, else AGENTRUN_HOME/cache. */
export function cacheRoot(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.AGENTRUN_CACHE_DIR?.trim();
  return dir ? path.resolve(dir) : path.join(home, 'cache');
}
