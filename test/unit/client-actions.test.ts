// How the CLI, the SDK and the page tell a conversation that is not running from other refusals
// (src/client/actions.ts), from the errors Temporal's client gives.
import { WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { notRunning, temporalMessage } from '../../src/client/actions.js';

describe('notRunning', () => {
  it('is true for a workflow Temporal does not find, or one that already completed', () => {
    expect(notRunning(new WorkflowNotFoundError('workflow not found', 'c1', undefined))).toBe(true);
    expect(notRunning(new Error('update failed', { cause: new Error('workflow execution already completed') }))).toBe(true);
  });

  it('is false for a validator refusal, whose words are the server’s', () => {
    const refusal = new Error('update failed', { cause: new Error('call c7 is not the one waiting (c8 is)') });
    expect(notRunning(refusal)).toBe(false);
    expect(temporalMessage(refusal)).toBe('call c7 is not the one waiting (c8 is)');
  });
});
