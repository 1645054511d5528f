// Streaming parser for XML-in-text tool calls (the seeds' `stream_and_parse_llm_response`).
//
// A state machine over plain text, `<thinking>…</thinking>` and tool blocks
// (`<read_file><path>a.ts</path></read_file>`). Chunks are scanned once: each push only
// looks at the small held-back tail plus the new chunk, so the cost is linear in the input
// whatever the chunk size, and the held-back tail is never longer than the longest tag.
//
// Chunking invariance: every decision (is this `<` a tag? does this value end here?) is
// taken only once enough characters are known, so any split of the same input yields the
// same events once adjacent text / thinking events are coalesced (see `coalesce`).
//
// Nothing is lost: the text events, each thinking block wrapped back in its tags, and the
// `raw` of tool calls and tool errors concatenate back to the exact input (an unclosed
// thinking block lacks only the `</thinking>` the model never wrote).

export type ParseEvent =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool_call'; name: string; params: Record<string, string>; raw: string }
  | { type: 'tool_error'; name?: string; error: string; raw: string };

interface ParsedXmlToolCall {
  name: string;
  params: Record<string, string>;
  raw: string;
}

interface XmlParseProblem {
  name?: string;
  error: string;
  raw: string;
}

export interface XmlParseResult {
  text: string;
  thinking: string;
  calls: ParsedXmlToolCall[];
  problems: XmlParseProblem[];
}

const THINKING = 'thinking';
const THINKING_CLOSE = '</thinking>';
/** Longest parameter name we wait for; a longer `<aaaa…` run cannot be a parameter tag. */
const MAX_PARAM_NAME = 64;
const TAG_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

function isNameChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || // a-z
    (c >= 65 && c <= 90) || // A-Z
    (c >= 48 && c <= 57) || // 0-9
    c === 95 || // _
    c === 45 || // -
    c === 46 // .
  );
}

const ENTITY = /&(lt|gt|amp|quot|apos);/g;
const ENTITY_VALUES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Single pass, so `&amp;lt;` becomes `&lt;` and not `<`. */
export function unescapeXml(s: string): string {
  return s.indexOf('&') === -1 ? s : s.replace(ENTITY, (_m, name: string) => ENTITY_VALUES[name]!);
}

/** Models write `<content>\nvalue\n</content>`: drop exactly one newline at each end. */
function trimOneNewline(s: string): string {
  let start = 0;
  let end = s.length;
  if (s.startsWith('\r\n')) start = 2;
  else if (s.startsWith('\n')) start = 1;
  if (end - start >= 2 && s.endsWith('\r\n')) end -= 2;
  else if (end > start && s.endsWith('\n')) end -= 1;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/**
 * Start of the shortest suffix of `s[from..]` that is a proper prefix of `delim`, or s.length
 * if there is none. Those characters must be held back: the next chunk may complete `delim`.
 */
function partialStart(s: string, from: number, delim: string): number {
  const lead = delim.charCodeAt(0);
  for (let p = Math.max(from, s.length - delim.length + 1); p < s.length; p++) {
    if (s.charCodeAt(p) === lead && delim.startsWith(s.slice(p))) return p;
  }
  return s.length;
}

const enum State {
  Text,
  Thinking,
  /** Inside a tool block, between parameters. */
  Tool,
  /** Inside a tool block, inside a parameter value. */
  Param,
}

export class XmlToolCallParser {
  private readonly tools: ReadonlySet<string>;
  /** Every prefix (including '') of `thinking` and of each tool name: what a `<…` at the end may still become. */
  private readonly openPrefixes: ReadonlySet<string>;
  private readonly maxOpenName: number;
  /** Longest name a `<name>` inside a tool block may have (parameters, or a tool tag). */
  private readonly maxTagName: number;

  private state: State = State.Text;
  /** Unprocessed tail of the input (a possible tag start), at most ~one tag long. */
  private pending = '';
  private ended = false;

  // Current tool block.
  private toolName = '';
  private toolClose = '';
  private rawParts: string[] = [];
  private params: Record<string, string> = Object.create(null) as Record<string, string>;
  private duplicates: string[] = [];
  // Current parameter.
  private paramName = '';
  private paramClose = '';
  private valueParts: string[] = [];

  constructor(toolNames: Iterable<string>) {
    const tools = new Set<string>();
    for (const name of toolNames) {
      if (!TAG_NAME.test(name)) throw new Error(`invalid tool name for an XML tag: ${JSON.stringify(name)}`);
      if (name !== THINKING) tools.add(name);
    }
    this.tools = tools;
    const prefixes = new Set<string>();
    let max = 0;
    for (const name of [THINKING, ...tools]) {
      max = Math.max(max, name.length);
      for (let i = 0; i <= name.length; i++) prefixes.add(name.slice(0, i));
    }
    this.openPrefixes = prefixes;
    this.maxOpenName = max;
    this.maxTagName = Math.max(MAX_PARAM_NAME, max);
  }

  /** The tool whose block the input so far ends inside, if any (for watchers: "writing read_file…"). */
  get openToolName(): string | undefined {
    return this.state === State.Tool || this.state === State.Param ? this.toolName : undefined;
  }

  push(chunk: string): ParseEvent[] {
    if (this.ended) throw new Error('XmlToolCallParser: push() after end()');
    const events: ParseEvent[] = [];
    if (chunk.length > 0) this.run(this.pending + chunk, events);
    return events;
  }

  end(): ParseEvent[] {
    if (this.ended) return [];
    this.ended = true;
    const events: ParseEvent[] = [];
    const rest = this.pending;
    this.pending = '';
    switch (this.state) {
      case State.Text:
        if (rest) events.push({ type: 'text', text: rest });
        break;
      case State.Thinking:
        // An unclosed thinking block is still reasoning, not answer text.
        if (rest) events.push({ type: 'thinking', text: rest });
        break;
      case State.Tool:
      case State.Param: {
        this.rawParts.push(rest);
        const where = this.state === State.Param ? ` (inside parameter <${this.paramName}>, which was not closed either)` : '';
        events.push({
          type: 'tool_error',
          name: this.toolName,
          error:
            `The <${this.toolName}> tool call was cut off: the message ended before its closing ` +
            `</${this.toolName}> tag${where}. The call was not run; send it again complete.`,
          raw: this.rawParts.join(''),
        });
        this.resetTool();
        break;
      }
    }
    this.state = State.Text;
    return events;
  }

  /** Process `s` (held-back tail + new chunk) from the start; leaves the undecided tail in `pending`. */
  private run(s: string, events: ParseEvent[]): void {
    const n = s.length;
    let i = 0;
    while (i < n) {
      switch (this.state) {
        case State.Text: {
          // Everything in a Text stretch that is not a recognised tag is text, so the text of
          // one stretch is the contiguous slice s[i..end): one event per stretch.
          const from = i;
          let lt = s.indexOf('<', i);
          let opened = false;
          while (lt !== -1) {
            let k = lt + 1;
            while (k < n && isNameChar(s.charCodeAt(k))) k++;
            if (k === n) {
              if (k - lt - 1 <= this.maxOpenName && this.openPrefixes.has(s.slice(lt + 1, k))) {
                if (lt > from) events.push({ type: 'text', text: s.slice(from, lt) });
                this.pending = s.slice(lt);
                return;
              }
              lt = -1;
              break;
            }
            const name = s.slice(lt + 1, k);
            if (s.charCodeAt(k) === 62 /* > */ && (name === THINKING || this.tools.has(name))) {
              if (lt > from) events.push({ type: 'text', text: s.slice(from, lt) });
              i = k + 1;
              if (name === THINKING) this.state = State.Thinking;
              else this.openTool(name, s.slice(lt, i));
              opened = true;
              break;
            }
            // Not a tag we know: the '<' is text; look for the next one.
            lt = s.indexOf('<', lt + 1);
          }
          if (!opened) {
            if (n > from) events.push({ type: 'text', text: s.slice(from, n) });
            i = n;
          }
          break;
        }

        case State.Thinking: {
          const close = s.indexOf(THINKING_CLOSE, i);
          if (close !== -1) {
            if (close > i) events.push({ type: 'thinking', text: s.slice(i, close) });
            i = close + THINKING_CLOSE.length;
            this.state = State.Text;
            break;
          }
          const p = partialStart(s, i, THINKING_CLOSE);
          if (p > i) events.push({ type: 'thinking', text: s.slice(i, p) });
          this.pending = s.slice(p);
          return;
        }

        case State.Tool: {
          const lt = s.indexOf('<', i);
          if (lt === -1) {
            // Text between parameters is kept in raw only.
            this.rawParts.push(s.slice(i));
            i = n;
            break;
          }
          if (lt > i) this.rawParts.push(s.slice(i, lt));
          if (s.charCodeAt(lt + 1) === 47 /* / */ || lt + 1 === n) {
            const close = this.toolClose;
            if (s.startsWith(close, lt)) {
              this.rawParts.push(close);
              i = lt + close.length;
              this.closeTool(events);
              break;
            }
            if (n - lt < close.length && close.startsWith(s.slice(lt))) {
              this.pending = s.slice(lt);
              return;
            }
            // A stray close tag (or a lone '<'): raw only.
            this.rawParts.push('<');
            i = lt + 1;
            break;
          }
          let k = lt + 1;
          while (k < n && isNameChar(s.charCodeAt(k))) k++;
          if (k === n) {
            if (k - lt - 1 <= this.maxTagName) {
              this.pending = s.slice(lt);
              return;
            }
            this.rawParts.push(s.slice(lt));
            i = n;
            break;
          }
          if (k > lt + 1 && k - lt - 1 <= this.maxTagName && s.charCodeAt(k) === 62 /* > */) {
            const name = s.slice(lt + 1, k);
            i = k + 1;
            if (this.tools.has(name)) {
              // A new tool tag between parameters: the model never closed the previous call.
              // Report it and start the new one, rather than swallowing the new call as a parameter.
              events.push({
                type: 'tool_error',
                name: this.toolName,
                error:
                  `The <${this.toolName}> tool call was not closed: <${name}> started before ` +
                  `</${this.toolName}>. The call was not run; send it again with its closing tag.`,
                raw: this.rawParts.join(''),
              });
              this.resetTool();
              this.openTool(name, s.slice(lt, i));
              break;
            }
            this.rawParts.push(s.slice(lt, i));
            this.paramName = name;
            this.paramClose = `</${name}>`;
            this.valueParts = [];
            this.state = State.Param;
            break;
          }
          this.rawParts.push('<');
          i = lt + 1;
          break;
        }

        case State.Param: {
          // Only the parameter's own close tag ends it: values may hold anything tag-like.
          const closeTag = this.paramClose;
          const close = s.indexOf(closeTag, i);
          if (close !== -1) {
            if (close > i) {
              const part = s.slice(i, close);
              this.valueParts.push(part);
              this.rawParts.push(part);
            }
            this.rawParts.push(closeTag);
            i = close + closeTag.length;
            this.finishParam();
            break;
          }
          const p = partialStart(s, i, closeTag);
          if (p > i) {
            const part = s.slice(i, p);
            this.valueParts.push(part);
            this.rawParts.push(part);
          }
          this.pending = s.slice(p);
          return;
        }
      }
    }
    this.pending = '';
  }

  private openTool(name: string, openTag: string): void {
    this.state = State.Tool;
    this.toolName = name;
    this.toolClose = `</${name}>`;
    this.rawParts = [openTag];
  }

  private finishParam(): void {
    const name = this.paramName;
    const value = unescapeXml(trimOneNewline(this.valueParts.join('')));
    if (Object.prototype.hasOwnProperty.call(this.params, name)) this.duplicates.push(name);
    this.params[name] = value;
    this.valueParts = [];
    this.paramName = '';
    this.paramClose = '';
    this.state = State.Tool;
  }

  private closeTool(events: ParseEvent[]): void {
    const raw = this.rawParts.join('');
    if (this.duplicates.length > 0) {
      // Two values for one parameter: running either could do the wrong thing.
      const names = [...new Set(this.duplicates)].map((d) => `<${d}>`).join(', ');
      events.push({
        type: 'tool_error',
        name: this.toolName,
        error: `The <${this.toolName}> tool call gives parameter ${names} more than once; give each parameter once.`,
        raw,
      });
    } else {
      // A plain object with a normal prototype, so callers can spread and serialise it.
      events.push({ type: 'tool_call', name: this.toolName, params: { ...this.params }, raw });
    }
    this.resetTool();
    this.state = State.Text;
  }

  private resetTool(): void {
    this.toolName = '';
    this.toolClose = '';
    this.rawParts = [];
    this.params = Object.create(null) as Record<string, string>;
    this.duplicates = [];
    this.paramName = '';
    this.paramClose = '';
    this.valueParts = [];
  }
}

/** Merge adjacent `text` events and adjacent `thinking` events (and drop empty ones). */
export function coalesce(events: readonly ParseEvent[]): ParseEvent[] {
  const out: ParseEvent[] = [];
  let parts: string[] = [];
  let kind: 'text' | 'thinking' | null = null;
  const flush = (): void => {
    if (kind !== null) {
      const text = parts.join('');
      if (text) out.push({ type: kind, text });
    }
    kind = null;
    parts = [];
  };
  for (const e of events) {
    if (e.type === 'text' || e.type === 'thinking') {
      if (kind !== e.type) flush();
      kind = e.type;
      parts.push(e.text);
    } else {
      flush();
      out.push(e);
    }
  }
  flush();
  return out;
}

/** A whole message's result, gathered from its events in any chunking (the calls and problems do not depend on it). */
class XmlParseCollector {
  private readonly textParts: string[] = [];
  private readonly thinkingParts: string[] = [];
  private readonly calls: ParsedXmlToolCall[] = [];
  private readonly problems: XmlParseProblem[] = [];

  add(events: readonly ParseEvent[]): void {
    for (const e of events) {
      switch (e.type) {
        case 'text':
          this.textParts.push(e.text);
          break;
        case 'thinking':
          this.thinkingParts.push(e.text);
          break;
        case 'tool_call':
          this.calls.push({ name: e.name, params: e.params, raw: e.raw });
          break;
        case 'tool_error':
          this.problems.push(e.name === undefined ? { error: e.error, raw: e.raw } : { name: e.name, error: e.error, raw: e.raw });
          break;
      }
    }
  }

  result(): XmlParseResult {
    return { text: this.textParts.join(''), thinking: this.thinkingParts.join(''), calls: [...this.calls], problems: [...this.problems] };
  }
}

/**
 * One answer as it streams: its events for watchers as each chunk comes, and, once ended, the
 * whole-message result of the same pass, so the answer's calls need no second parse.
 */
export class StreamedAnswer {
  private readonly parser: XmlToolCallParser;
  private readonly collected = new XmlParseCollector();
  private readonly fed: string[] = [];
  private ended = false;

  constructor(toolNames: Iterable<string>) {
    this.parser = new XmlToolCallParser(toolNames);
  }

  push(chunk: string): ParseEvent[] {
    this.fed.push(chunk);
    const events = this.parser.push(chunk);
    this.collected.add(events);
    return events;
  }

  end(): ParseEvent[] {
    this.ended = true;
    const events = this.parser.end();
    this.collected.add(events);
    return events;
  }

  /**
   * The parse of `text` when it is exactly what streamed through here (an answer of one segment);
   * undefined when it is not (continued or resumed answers, stitched from several streams): parse it whole.
   */
  parseOf(text: string): XmlParseResult | undefined {
    if (!this.ended) throw new Error('StreamedAnswer: parseOf() before end()');
    return this.fed.join('') === text ? this.collected.result() : undefined;
  }
}

/** Parse a complete message in one go. */
export function parseXmlToolCalls(text: string, toolNames: Iterable<string>): XmlParseResult {
  const answer = new StreamedAnswer(toolNames);
  answer.push(text);
  answer.end();
  return answer.parseOf(text)!;
}
