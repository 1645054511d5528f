export { DEFAULT_SANDBOX, effectiveSandbox, type SandboxSettings } from './policy.js';
export { DEFAULT_LIMITS, type CommandLimits } from './limits.js';
export { startCommand } from './spawn.js';
export { assertSandboxUsable, probeSandbox, unsandboxedAllowed } from './preflight.js';
export { allowedEnv } from './env.js';
export { networkPolicy } from './network.js';
export { LIFECYCLE, refusalNote, runInSandbox, runProgram, runSandboxed, TAIL_BYTES } from './run.js';
