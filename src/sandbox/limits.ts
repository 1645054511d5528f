// Per-command resource limits, set as hard rlimits inside the sandbox before the command
// starts (so the command cannot raise them), plus pids and memory cgroups where they are writable
// (RLIMIT_NPROC does not bind uid 0, and counts a user's processes across sandboxes; RLIMIT_AS
// binds each process alone).

export interface CommandLimits {
  /** CPU seconds per process (RLIMIT_CPU). */
  cpuSec: number;
  /** Virtual memory per process in KiB (RLIMIT_AS); generous: V8 and WebAssembly reserve far more than they use. */
  addressSpaceKb: number;
  /** Processes of the command's user (RLIMIT_NPROC) and of the command (pids cgroup). */
  processes: number;
  /** Memory of all the command's processes together, in KiB (memory cgroup, where the worker can make one): past it the kernel kills within the command. */
  memoryKb: number;
  /** Largest file a command may write, in KiB (RLIMIT_FSIZE): `yes > big` gets SIGXFSZ. */
  fileSizeKb: number;
  /** Open files per process (RLIMIT_NOFILE). */
  openFiles: number;
  /** Output (stdout + stderr) after which the command is killed. */
  outputBytes: number;
  /** Size of the private /tmp. */
  tmpBytes: number;
}

export const DEFAULT_LIMITS: CommandLimits = {
  cpuSec: 3600,
  addressSpaceKb: 32 * 1024 * 1024,
  processes: 1024,
  memoryKb: 8 * 1024 * 1024,
  fileSizeKb: 2 * 1024 * 1024,
  openFiles: 4096,
  outputBytes: 256 * 1024 * 1024,
  tmpBytes: 1024 * 1024 * 1024,
};

/**
 * `bash -c` with a prologue that sets the limits as hard limits on its own line before the
 * command, in the same shell (a second bash to exec would cost a few ms per command).
 * A limit the worker already holds lower stays lower (ulimit fails quietly: that is stricter).
 */
export function limitedShell(limits: CommandLimits, cpuSec: number, command: string, before?: string): string[] {
  const l = limits;
  const prologue = [
    `ulimit -t ${Math.max(1, Math.ceil(Math.min(cpuSec, l.cpuSec)))}`,
    `ulimit -v ${l.addressSpaceKb}`,
    `ulimit -u ${l.processes}`,
    `ulimit -f ${l.fileSizeKb}`,
    `ulimit -n ${l.openFiles}`,
    'ulimit -c 0',
  ]
    .map((x) => `${x} 2>/dev/null;`)
    .join(' ');
  // `before` (the hand-over of the proxy's listening socket) runs under the same limits, before the command.
  return ['/bin/bash', '-c', `${prologue}\n${before ? `${before}\n` : ''}${command}`];
}
