// What a pending approval shows a person: the whole arguments of the call, as the approval binds
// all of them, with every control character escaped (a terminal must not be steered by what the
// model wrote: ESC sequences, carriage returns that overwrite a line, bidirectional overrides).
import type { Store } from '../store/index.js';

const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff]/g;
const CONTROLS_AND_BACKSLASH = /[\\\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * `s` with C0 and C1 controls, DEL, line and paragraph separators and bidirectional formatting
 * characters written as \n, \t, \r or \u{XXXX}; backslashes doubled so the escapes are unambiguous.
 */
export function escapeControls(s: string, opts: { backslashes?: boolean } = {}): string {
  return s.replace(opts.backslashes === false ? CONTROLS : CONTROLS_AND_BACKSLASH, (c) => {
    if (c === '\\') return '\\\\';
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return `\\u{${c.codePointAt(0)!.toString(16).padStart(4, '0')}}`;
  });
}

/** The whole arguments of a stored call as one line: `name {"key": "value", …}`, controls escaped; undefined when not stored. */
export async function pendingCallLine(
  store: Pick<Store, 'getToolCall'>,
  conversationId: string,
  callId: string,
): Promise<{ line: string; args: Record<string, unknown> } | undefined> {
  const call = await store.getToolCall(conversationId, callId);
  if (!call) return undefined;
  // JSON already escapes C0 controls and backslashes; the rest (DEL, C1, bidi) is escaped after.
  return { line: `${call.name} ${escapeControls(JSON.stringify(call.args), { backslashes: false })}`, args: call.args };
}
