// The worker's own counters as Prometheus reads them: a wait is counted under its label, each kind apart.
import { describe, expect, it } from 'vitest';
import { inc, renderMetrics, waited } from '../../src/metrics.js';

describe('the wait counters', () => {
  it('add each wait to its own label, in seconds and in number', () => {
    waited('a "quoted" wait', 1500);
    waited('a "quoted" wait', 500);
    waited('another wait', 250);
    const text = renderMetrics();
    expect(text).toMatch(/^agentrun_wait_seconds_total\{what="a _quoted_ wait"\} 2$/m);
    expect(text).toMatch(/^agentrun_waits_total\{what="a _quoted_ wait"\} 2$/m);
    expect(text).toMatch(/^agentrun_wait_seconds_total\{what="another wait"\} 0.25$/m);
    expect(text).toMatch(/^agentrun_waits_total\{what="another wait"\} 1$/m);
  });

  it('share a label with the same wait counted through inc', () => {
    inc('agentrun_waits_total', { what: 'another wait' });
    expect(renderMetrics()).toMatch(/^agentrun_waits_total\{what="another wait"\} 2$/m);
  });
});
