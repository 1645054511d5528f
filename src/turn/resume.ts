// A model step retried after its worker died mid-answer does not ask the model again from the
// start (every output token of the lost attempt would be billed twice): the text the live stream
// already holds becomes a segment cut off for length, and the answer goes on from it with the
// continuation used for `length` cut-offs (prefill or continue prompt, stitched, usage summed).
import type { RunConfig } from '../config.js';
import { countTokens } from '../model/tokens.js';
import type { Store } from '../store/index.js';
import { activityLog } from './step.js';

export interface Resumed {
  /** The attempt whose streamed text the answer continues. */
  attempt: number;
  /** The segment to ask for next. */
  segment: number;
}

/**
 * When an earlier attempt of this segment streamed text and the continuation budget allows one
 * more segment: that text stored as the segment (finish reason `length`, its output tokens counted
 * from the text since the provider's usage report died with the attempt), and the next segment to ask.
 */
export async function resumeStreamedAnswer(
  store: Store,
  config: Pick<RunConfig, 'model' | 'maxContinuations'>,
  at: { conversationId: string; turn: number; seq: number; segment: number; attempt: number },
): Promise<Resumed | undefined> {
  const { conversationId, turn, seq, segment, attempt } = at;
  if (attempt <= 1) return undefined;
  const streamed = [...(await store.streamedOutput(conversationId, seq, segment, attempt)).entries()].filter(([, o]) => o.content.length > 0);
  if (streamed.length === 0) return undefined;
  const [from, output] = streamed.reduce((a, b) => (b[0] > a[0] ? b : a));
  const logger = activityLog(conversationId, turn);
  if (segment >= config.maxContinuations) {
    logger.info(
      { seq, segment, from, maxContinuations: config.maxContinuations },
      'the continuation budget is spent, so the answer an earlier attempt streamed cannot be continued: asking the model again from the start',
    );
    return undefined;
  }
  const completionTokens = countTokens(output.content + output.reasoning, config.model);
  await store.putSegment({
    conversationId,
    seq,
    segment,
    content: output.content,
    ...(output.reasoning ? { reasoning: output.reasoning } : {}),
    finishReason: 'length',
    usage: { promptTokens: 0, completionTokens, totalTokens: completionTokens },
  });
  logger.info({ seq, segment, from, chars: output.content.length }, 'continuing the answer an earlier attempt streamed before it ended');
  return { attempt: from, segment: segment + 1 };
}
