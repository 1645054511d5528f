// Terminal escape sequences (colours, cursor moves, titles) in a program's output. They mean
// something to a colour terminal only: to the model, a JSON result, a pipe or the page they are
// noise that costs tokens and hides the text, so output is stored and passed on without them.

// CSI (ESC [ … final byte), OSC (ESC ] … BEL or ESC \), and the two-byte escapes; also the 8-bit CSI.
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]|\u009b[0-?]*[ -/]*[@-~]/g;
/** An escape sequence cut off at the end of a chunk: kept until the next one completes it. */
const UNFINISHED = /\u001b(?:\[[0-?]*[ -/]*|\][^\u0007\u001b]*\u001b?)?$|\u009b[0-?]*[ -/]*$/;

export function stripAnsi(text: string): string {
  return text.includes('\u001b') || text.includes('\u009b') ? text.replace(ESCAPES, '') : text;
}

/** Strips a stream chunk by chunk, a sequence split between two chunks included. */
export class AnsiStripper {
  private carry = '';

  push(chunk: string): string {
    const text = this.carry + chunk;
    const cut = UNFINISHED.exec(text);
    this.carry = cut ? cut[0] : '';
    return stripAnsi(cut ? text.slice(0, cut.index) : text);
  }
}
