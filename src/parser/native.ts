// Native (OpenAI `tool_calls`) tool calls: assembling streamed fragments and checking the
// argument JSON with an error message a model can act on.

/** One streamed `delta.tool_calls[]` entry (structurally the openai SDK's chunk type). */
export interface ToolCallFragment {
  index: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface AssembledToolCall {
  index: number;
  id: string;
  name: string;
  arguments: string;
}

interface Slot {
  index: number;
  id: string;
  name: string;
  args: string[];
}

/**
 * Streams send each call's id and name once (usually in its first fragment) and its
 * argument JSON in pieces keyed by `index`; parallel calls interleave by index.
 */
export class NativeToolCallAssembler {
  private readonly slots = new Map<number, Slot>();
  private lastIndex = -1;

  push(toolCalls: ReadonlyArray<ToolCallFragment>): void {
    for (const frag of toolCalls) {
      const index = this.indexOf(frag);
      let slot = this.slots.get(index);
      if (!slot) {
        slot = { index, id: '', name: '', args: [] };
        this.slots.set(index, slot);
      }
      this.lastIndex = index;
      // First non-empty id/name wins: some providers repeat them (or send '') on later fragments.
      if (!slot.id && frag.id) slot.id = frag.id;
      const fn = frag.function;
      if (fn) {
        if (!slot.name && fn.name) slot.name = fn.name;
        if (fn.arguments) slot.args.push(fn.arguments);
      }
    }
  }

  /** The calls so far, by index; `arguments` is the raw concatenated JSON text. */
  calls(): AssembledToolCall[] {
    return [...this.slots.values()].sort((a, b) => a.index - b.index).map((s) => ({ index: s.index, id: s.id, name: s.name, arguments: s.args.join('') }));
  }

  /**
   * Some OpenAI-compatible servers omit `index`. Then a fragment with a new id starts a new
   * call and one without an id continues the last call.
   */
  private indexOf(frag: ToolCallFragment): number {
    if (typeof frag.index === 'number' && Number.isInteger(frag.index)) return frag.index;
    if (frag.id) {
      for (const s of this.slots.values()) if (s.id === frag.id) return s.index;
      return this.slots.size === 0 ? 0 : Math.max(...this.slots.keys()) + 1;
    }
    return this.lastIndex >= 0 ? this.lastIndex : 0;
  }
}

export type NativeArgumentsResult = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** Parse a call's argument JSON; it must be an object. An empty string means no arguments. */
export function parseNativeArguments(raw: string): NativeArgumentsResult {
  if (raw.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    // V8's messages vary by version and often lack the position, so find it ourselves.
    const fault = locateJsonError(raw) ?? { pos: 0, reason: 'invalid JSON' };
    return { ok: false, error: describeJsonError(raw, fault) };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return { ok: false, error: `The tool arguments must be a JSON object like {"name": value}, but they are ${kind}: ${visible(excerpt(raw, 80))}` };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

export interface JsonFault {
  /** Offset (UTF-16 code units) of the first character that makes the text invalid; raw.length if it ends early. */
  pos: number;
  reason: string;
}

/** Where and why `raw` stops being valid JSON, or null if it is valid. */
export function locateJsonError(raw: string): JsonFault | null {
  try {
    new JsonScanner(raw).document();
    return null;
  } catch (e) {
    if (e instanceof JsonFaultError) return { pos: e.pos, reason: e.reason };
    throw e;
  }
}

function describeJsonError(raw: string, fault: JsonFault): string {
  const { line, column } = lineColumn(raw, fault.pos);
  const where =
    fault.pos >= raw.length
      ? `: the text ends at position ${fault.pos} (line ${line}, column ${column}), as if cut off`
      : ` at position ${fault.pos} (line ${line}, column ${column})`;
  const before = (fault.pos > 40 ? '…' : '') + raw.slice(Math.max(0, fault.pos - 40), fault.pos);
  const after = raw.slice(fault.pos, fault.pos + 24) + (fault.pos + 24 < raw.length ? '…' : '');
  return (
    `The tool arguments are not valid JSON: ${fault.reason}${where}. ` +
    `Near (» marks the position): ${visible(before)}»${visible(after)}\n` +
    `Send the call again with the arguments as one complete JSON object.`
  );
}

/** Keep an excerpt on one line, so the marker stays next to the fault. */
function visible(s: string): string {
  return s.replace(/\r/g, '\\r').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
}

function excerpt(s: string, max: number): string {
  return s.length > max ? s.slice(0, max) + '…' : s;
}

function lineColumn(s: string, pos: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = s.indexOf('\n'); i !== -1 && i < pos; i = s.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: pos - lineStart + 1 };
}

class JsonFaultError extends Error {
  constructor(
    readonly pos: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** A validating JSON scanner (RFC 8259) that only reports the first fault; values are not built. */
class JsonScanner {
  private i = 0;
  constructor(private readonly s: string) {}

  document(): void {
    this.ws();
    this.value();
    this.ws();
    if (this.i < this.s.length) this.fail('unexpected text after the end of the JSON value');
  }

  private fail(reason: string, pos = this.i): never {
    throw new JsonFaultError(pos, reason);
  }

  private describe(): string {
    if (this.i >= this.s.length) return 'the text ends';
    return `found ${JSON.stringify(this.s[this.i])}`;
  }

  private ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.i++;
      else break;
    }
  }

  private value(depth = 0): void {
    if (depth > 10_000) this.fail('JSON nested too deeply');
    const c = this.s[this.i];
    switch (c) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
        return this.string();
      case 't':
        return this.literal('true');
      case 'f':
        return this.literal('false');
      case 'n':
        return this.literal('null');
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        if (c === "'") this.fail('strings must use double quotes, not single quotes');
        if (c === undefined) this.fail('expected a value');
        this.fail(`expected a value (string, number, object, array, true, false or null) but ${this.describe()}`);
    }
  }

  private object(depth: number): void {
    this.i++; // {
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      const c = this.s[this.i];
      if (c !== '"') {
        if (c === '}') this.fail('trailing comma before "}"');
        if (c === undefined) this.fail('the object is not closed');
        this.fail(`expected a property name in double quotes but ${this.describe()}`);
      }
      this.string();
      this.ws();
      if (this.s[this.i] !== ':') this.fail(`expected ":" after the property name but ${this.describe()}`);
      this.i++;
      this.ws();
      this.value(depth + 1);
      this.ws();
      const d = this.s[this.i];
      if (d === ',') {
        this.i++;
        continue;
      }
      if (d === '}') {
        this.i++;
        return;
      }
      if (d === undefined) this.fail('the object is not closed');
      this.fail(`expected "," or "}" after a property value but ${this.describe()}`);
    }
  }

  private array(depth: number): void {
    this.i++; // [
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] === ']') this.fail('trailing comma before "]"');
      this.value(depth + 1);
      this.ws();
      const d = this.s[this.i];
      if (d === ',') {
        this.i++;
        continue;
      }
      if (d === ']') {
        this.i++;
        return;
      }
      if (d === undefined) this.fail('the array is not closed');
      this.fail(`expected "," or "]" after an array element but ${this.describe()}`);
    }
  }

  private string(): void {
    const s = this.s;
    const start = this.i;
    this.i++; // "
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 34 /* " */) {
        this.i++;
        return;
      }
      if (c === 92 /* \ */) {
        const e = s[this.i + 1];
        if (e === undefined) break;
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(this.i + 2, this.i + 6))) this.fail('invalid \\u escape (needs 4 hex digits)');
          this.i += 6;
        } else if ('"\\/bfnrt'.includes(e)) {
          this.i += 2;
        } else {
          this.fail(`invalid escape "\\${e}" in a string`);
        }
        continue;
      }
      if (c < 0x20) {
        this.fail(c === 10 ? 'raw newline inside a string (write it as \\n)' : 'raw control character inside a string (escape it)');
      }
      this.i++;
    }
    this.fail(`the string that starts at position ${start} is not closed`);
  }

  private literal(word: string): void {
    if (this.s.startsWith(word, this.i)) {
      this.i += word.length;
      return;
    }
    this.fail(`expected ${word}`);
  }

  private number(): void {
    const m = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    m.lastIndex = this.i;
    const r = m.exec(this.s);
    if (!r) this.fail('invalid number');
    this.i += r[0].length;
    // A number directly followed by digits or a dot means a malformed number such as 01 or 1.
    const next = this.s[this.i];
    if (next !== undefined && /[0-9.eE+-]/.test(next)) this.fail('invalid number');
  }
}
