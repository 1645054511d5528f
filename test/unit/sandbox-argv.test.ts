// The bwrap command line: a secret file is covered wherever the command could read it, and the
// sandbox user is named to setpriv so that it resolves it from the files.
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rootArgs, sandboxArgv, type BwrapPlan } from '../../src/sandbox/bwrap.js';
import { DEFAULT_LIMITS } from '../../src/sandbox/limits.js';
import { runningAsRoot } from '../../src/sandbox/workspace-owner.js';

const covered = (args: string[], f: string) => args.some((a, i) => a === '--ro-bind' && args[i + 1] === '/dev/null' && args[i + 2] === f);

describe('bwrap arguments', () => {
  it('covers /etc/shadow for a user its permissions let read it, and only then', () => {
    const st = statSync('/etc/shadow');
    // The file's own group may read it (0640 root:shadow): a sandbox user in that group gets the cover.
    expect(covered(rootArgs(process.env, { uid: 65534, gid: st.gid }).args, '/etc/shadow')).toBe((st.mode & 0o040) !== 0);
    expect(covered(rootArgs(process.env, { uid: st.uid === 0 ? 4242 : st.uid, gid: 4242 }).args, '/etc/shadow')).toBe(
      (st.mode & 0o004) !== 0 || (st.uid !== 0 && (st.mode & 0o400) !== 0),
    );
    // Any user at all, for a file anyone may read.
    expect(covered(rootArgs(process.env, { uid: 4242, gid: 4242 }).args, '/etc/passwd')).toBe(false);
  });

  it('names the sandbox user to setpriv as /etc/passwd does; a root worker runs the command as that user', () => {
    const plan: BwrapPlan = { workspace: '/tmp', settings: { policy: 'read-only', network: 'off', env: [] }, limits: DEFAULT_LIMITS };
    const argv = sandboxArgv({ ...plan, user: { uid: 65534, gid: 65534 } }, ['/bin/sh', '-c', 'id -u; id -g; id -G']);
    const setpriv = argv.findIndex((a) => a.endsWith('/setpriv'));
    const name = execFileSync('getent', ['passwd', '65534'], { encoding: 'utf8' }).split(':')[0];
    expect(argv[setpriv + 1]).toBe(`--reuid=${name}`);
    if (runningAsRoot()) {
      const out = execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
      expect(out.trim().split('\n')).toEqual(['65534', '65534', '65534']);
    } else {
      // A worker that is not root switches no user: its commands run as itself, in a user namespace.
      expect(sandboxArgv(plan, ['/bin/true']).some((a) => a.endsWith('/setpriv'))).toBe(false);
    }
  });
});
