// The summary inside the model step gives up on the step's last but one attempt, whatever
// the step's retry policy says (MODEL_STEP_ATTEMPTS unless the policy says another number).
import { describe, expect, it } from 'vitest';
import { summaryGiveUpAttempt } from '../../src/context/summarise.js';
import { MODEL_STEP_ATTEMPTS } from '../../src/model/error-types.js';

describe('summary retries follow the enclosing activity', () => {
  it('leaves the last attempt of the model step for the call without a summary', () => {
    expect(summaryGiveUpAttempt()).toBe(MODEL_STEP_ATTEMPTS - 1);
    expect(summaryGiveUpAttempt(5)).toBe(4);
    expect(summaryGiveUpAttempt(1)).toBe(1);
  });
});
