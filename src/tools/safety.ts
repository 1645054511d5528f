// What a call may do, as far as safety goes: whether a person must approve it (a dangerous
// command, a file tool writing git's own code files) and whether it may run again after a crash
// cut it off. Decided once per call, as it is parsed (src/turn/calls.ts classifyCall); the verdict
// travels with the call, and the ledger and execute_command take it from there. They compute it
// here themselves only for a call that comes without one (a call parsed before calls carried it,
// or a caller that runs a tool directly). Where the conversation's commands run unsandboxed
// (`--sandbox off`), a command running a program the checker does not know needs a person too.
import { gitCodeFileReason } from '../command-safety/dangerous.js';
import { mutates, type CallSafety, type ToolDefinition } from './types.js';

export function callSafety(
  tool: Pick<ToolDefinition, 'kind' | 'repeatable' | 'classify'> | undefined,
  args: Record<string, unknown>,
  workspace: string,
  unsandboxed = false,
): CallSafety {
  const own = tool?.classify?.(args, workspace, unsandboxed);
  if (own) return own;
  const repeatable = tool?.repeatable !== false;
  // A file tool writing .gitattributes or .gitmodules (the tools refuse .git itself) needs a person too.
  const reason = tool && mutates(tool) && typeof args.path === 'string' ? gitCodeFileReason(args.path) : undefined;
  return reason ? { dangerous: true, reasons: [reason], repeatable } : { dangerous: false, reasons: [], repeatable };
}
