// Continuation merging: the segments of one answer cut off for length become one message.
import type { SegmentRow } from '../store/index.js';
import { parseNativeArguments } from '../parser/native.js';
import { stitchContinuation, stitchNativeArguments } from '../parser/stitch.js';
import { addUsage, ZERO_USAGE, type ContinuationStrategy } from '../types.js';

export type NativeCall = { id: string; name: string; arguments: string };

/** Append a continuation's tool calls: the first one carries on an unfinished last call. */
function mergeNativeCalls(previous: NativeCall[], next: NativeCall[]): NativeCall[] {
  const out = previous.map((c) => ({ ...c }));
  const last = out[out.length - 1];
  let rest = next;
  if (last && next.length && !parseNativeArguments(last.arguments).ok && (!next[0]!.name || next[0]!.name === last.name)) {
    last.arguments = stitchNativeArguments(last.arguments, next[0]!.arguments).text;
    rest = next.slice(1);
  }
  return [...out, ...rest.map((c) => ({ ...c }))];
}

export type MergedAnswer = ReturnType<typeof mergeSegments>;

/** Merge the segments of one answer: text stitched (overlap removed), usage summed. */
export function mergeSegments(segments: Pick<SegmentRow, 'content' | 'reasoning' | 'toolCalls' | 'usage'>[], strategy: ContinuationStrategy) {
  let content = '';
  let reasoning = '';
  let toolCalls: NativeCall[] = [];
  let usage = ZERO_USAGE;
  segments.forEach((s, i) => {
    content = i === 0 || strategy === 'prefill' ? content + s.content : stitchContinuation(content, s.content).text;
    reasoning += s.reasoning ?? '';
    toolCalls = i === 0 ? [...(s.toolCalls ?? [])] : mergeNativeCalls(toolCalls, s.toolCalls ?? []);
    usage = addUsage(usage, s.usage);
  });
  return { content, reasoning, toolCalls, usage };
}
