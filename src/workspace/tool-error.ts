// The error a tool reports to the model; a leaf, so the walk beneath the workspace (./beneath.ts)
// can use it from below the sandbox and the settings.
/** An error the model should see as the tool result (bad path, no match, …), not an infrastructure failure. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly meta?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}
