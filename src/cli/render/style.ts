// Colours for the terminal renderer: picocolors, switched on only for a TTY without NO_COLOR
// (and never with TERM=dumb), so piped output and NO_COLOR get plain text, no escape codes.
import pc from 'picocolors';

export type Style = ReturnType<typeof pc.createColors>;

export interface TerminalStream {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Whether `stream` is a terminal that may receive escape codes (colours, the spinner). */
export function isRichTerminal(stream: TerminalStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!stream.isTTY) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return env.TERM !== 'dumb';
}

export function styleFor(rich: boolean): Style {
  return pc.createColors(rich);
}

/** `text` with each line prefixed by `indent` and cut into pieces that fit `width` (wide lines stay aligned). */
export function wrapIndented(text: string, width: number, indent: string): string {
  const room = Math.max(20, width - indent.length);
  return text
    .trimEnd()
    .split('\n')
    .flatMap((line) => {
      const pieces: string[] = [];
      for (let i = 0; i < line.length; i += room) pieces.push(line.slice(i, i + room));
      return pieces.length ? pieces : [''];
    })
    .map((l) => indent + l)
    .join('\n');
}
