import { describe, expect, it } from 'vitest';
import { Slots } from '../../activities/limits.js';

describe('model-call slots', () => {
  it('lets at most `limit` holders in and hands slots on in arrival order', async () => {
    const slots = new Slots(2);
    const order: string[] = [];
    const a = await slots.acquire();
    const b = await slots.acquire();
    const c = slots.acquire().then((release) => (order.push('c'), release));
    const d = slots.acquire().then((release) => (order.push('d'), release));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]);
    a();
    a(); // releasing twice frees one slot only
    const releaseC = await c;
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['c']);
    b();
    (await d)();
    releaseC();
    expect(order).toEqual(['c', 'd']);
  });
});
