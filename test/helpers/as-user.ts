// Run a node script of this project as an unprivileged user. The checkout may sit under a 0700
// directory (CI, containers), out of that user's reach: the project is bind-mounted at `mount`
// in a mount namespace of the child's own, and the child becomes the user through setpriv there.
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface UnprivilegedUser {
  uid: number;
  gid: number;
  /** An empty directory the user can traverse, where the project appears. */
  mount: string;
}

/**
 * The command (file and arguments, to run with cwd `/`) that runs `node <script> <args>` as `user`;
 * `script` is relative to the project, and a TypeScript one runs through tsx.
 */
export function nodeAsUser(user: UnprivilegedUser, script: string, args: string[] = []): [file: string, args: string[]] {
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  return [
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      'mount --bind "$0" "$1" && cd "$1" && u="$2" g="$3" node="$4" && shift 4 && exec setpriv --reuid="$u" --regid="$g" --clear-groups -- "$node" "$@"',
      ROOT,
      user.mount,
      String(user.uid),
      String(user.gid),
      process.execPath,
      ...loader,
      script,
      ...args,
    ],
  ];
}
