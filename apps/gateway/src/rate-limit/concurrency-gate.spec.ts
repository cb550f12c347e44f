import { ConcurrencyGate } from './concurrency-gate.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ConcurrencyGate', () => {
  it('never runs more than max tasks at once, hands slots over in order, and runs all that wait long enough', async () => {
    const gate = new ConcurrencyGate(2, 10_000);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        gate.run(async () => {
          peak = Math.max(peak, ++running);
          order.push(i);
          await sleep(5);
          running--;
          return i;
        }),
      ),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([...Array(12).keys()]);
    expect(outcomes.map((o) => o.ran && o.value)).toEqual([...Array(12).keys()]);
  });

  it('tells a caller no once it has waited waitMs, without running its task', async () => {
    const gate = new ConcurrencyGate(1, 30);
    let ran = 0;
    const slow = gate.run(() => sleep(200).then(() => ++ran));
    const refused = await gate.run(async () => ++ran);
    expect(refused).toEqual({ ran: false });
    expect(await slow).toEqual({ ran: true, value: 1 });
    // The slot is free again.
    expect(await gate.run(async () => 'next')).toEqual({ ran: true, value: 'next' });
  });

  it('frees the slot when a task throws', async () => {
    const gate = new ConcurrencyGate(1, 50);
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 1)).toEqual({ ran: true, value: 1 });
  });
});
