// A `for` loop's variable stands, in the loop's commands, for each word of its list: `for f in
// ~/.ssh/id_*; do cat "$f"; done` reads the keys as `cat ~/.ssh/id_*` would. The checker reads the
// commands once per value instead of judging `$f` as an unknown path, so a loop hides nothing a
// command spelled out would show.
import type { SimpleCommand, Word } from './shell-lex.js';

/** The most values a loop's commands are read with; a longer list is read with its first ones. */
const MAX_VALUES = 8;

/** A sequence (`{1..254}`, `{a..z}`), which the shell makes into every value between its ends: those ends stand for it. */
const SEQUENCE = /^(.*)\{(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.-?\d+)?\}(.*)$/;
function rangeEnds(text: string): string[] {
  const m = SEQUENCE.exec(text);
  return m ? [m[1]! + m[2]! + m[4]!, m[1]! + m[3]! + m[4]!] : [text];
}

/** The values a loop's variable takes as the text spells them, and whether they are all it takes. */
export interface LoopValues {
  values: string[];
  /** Every value is here: no command substitution, expansion or sequence stood in the list, and none was cut. */
  complete: boolean;
}

/**
 * `for NAME in WORD…` (the words already split by the lexer and braces expanded): the variable and
 * the values it takes that the text spells out. A value computed by a command substitution is not
 * known before it runs and is left out; its command is judged where the list is.
 */
export function loopBinding(words: readonly Word[]): [string, LoopValues] | undefined {
  if (words[0]?.text !== 'for' || !/^[A-Za-z_]\w*$/.test(words[1]?.text ?? '') || words[2]?.text !== 'in') return undefined;
  const list = words.slice(3);
  const spelled = list.filter((w) => w.nested.length === 0).flatMap((w) => rangeEnds(w.text));
  const values = spelled.slice(0, MAX_VALUES);
  const complete = list.every((w) => !w.expands && !SEQUENCE.test(w.text)) && spelled.length === values.length;
  return values.length ? [words[1]!.text, { values, complete }] : undefined;
}

/** Adds a loop's values to those its variable already takes (an inner loop read once per outer value). */
export function bindLoop(loops: Map<string, LoopValues>, [name, added]: [string, LoopValues]): void {
  const known = loops.get(name) ?? { values: [], complete: true };
  const all = [...new Set([...known.values, ...added.values])];
  loops.set(name, { values: all.slice(0, MAX_VALUES), complete: known.complete && added.complete && all.length <= MAX_VALUES });
}

/** `$NAME` or `${NAME}` anywhere in a text. */
export const loopReference = (name: string) => new RegExp(`\\$(?:${name}(?!\\w)|\\{${name}\\})`, 'g');

function substituted(w: Word, pattern: RegExp, value: string): Word {
  const text = w.text.replace(pattern, () => value);
  if (text === w.text && !w.nested.some((n) => n.match(pattern))) return w;
  const nested = w.nested.map((n) => n.replace(pattern, () => value));
  return { ...w, text, nested, expands: nested.length > 0 || /\$/.test(text) };
}

/**
 * The first loop variable the command refers to (of those not in `done`, already put in), the
 * command once for each of its values, and whether those are all its values; undefined when it
 * refers to none. A value that refers to its own variable is left out.
 */
export function withLoopValues(
  cmd: SimpleCommand,
  loops: ReadonlyMap<string, LoopValues>,
  done: ReadonlySet<string>,
): { name: string; commands: SimpleCommand[]; complete: boolean } | undefined {
  const texts = [...cmd.words, ...cmd.redirects.map((r) => r.target)].flatMap((w) => [w.text, ...w.nested]);
  for (const [name, { values, complete }] of loops) {
    if (done.has(name)) continue;
    const pattern = loopReference(name);
    if (!texts.some((t) => t.match(pattern))) continue;
    const own = values.filter((v) => !v.match(pattern));
    if (!own.length) continue;
    const commands = own.map((value) => ({
      words: cmd.words.map((w) => substituted(w, pattern, value)),
      redirects: cmd.redirects.map((r) => ({ ...r, target: substituted(r.target, pattern, value) })),
    }));
    return { name, commands, complete: complete && own.length === values.length };
  }
  return undefined;
}
