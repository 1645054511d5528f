export {
  DEFAULT_SANDBOX,
  effectiveSandbox,
  ENV_NAME_PATTERN,
  envRefusal,
  neverPassed,
  SANDBOX_POLICIES,
  type NetworkMode,
  type SandboxPolicy,
  type SandboxSettings,
} from './policy.js';
export { DEFAULT_LIMITS, type CommandLimits } from './limits.js';
export { startCommand, type CommandSpec, type RunningCommand } from './spawn.js';
export { assertSandboxUsable, probeSandbox, SANDBOX_HELP, unsandboxedAllowed } from './preflight.js';
export { allowedEnv, commandEnv } from './env.js';
export { sandboxCommandWrapper } from './wrap.js';
export { hostAllowed, networkPolicy, networkRefusal, parseNetwork, type NetworkPolicy } from './network.js';
export {
  LIFECYCLE,
  refusalNote,
  runInSandbox,
  runProgram,
  runSandboxed,
  superviseCommand,
  TAIL_BYTES,
  type Ended,
  type Lifecycle,
  type ProgramSpec,
  type RunOptions,
  type SandboxRun,
} from './run.js';
