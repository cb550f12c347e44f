import { LogBudget, type Throttled } from './log-budget.js';

/** A member that records whether the budget holds it. */
class Member implements Throttled {
  held = false;
  hold(): void {
    this.held = true;
  }
  release(): void {
    this.held = false;
  }
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 5));
  return condition();
}

describe('LogBudget', () => {
  it('holds its members past the read rate and releases them once the debt is paid', async () => {
    let t = 0;
    const budget = new LogBudget({ rateBytes: 1000, burstBytes: 10, readRateBytes: 1000 }, () => t);
    const member = new Member();
    budget.join(member);
    budget.onRead(15);
    expect(member.held).toBe(true);
    t = 10;
    expect(await until(() => !member.held, 2000)).toBe(true);
    budget.dispose();
  });

  it('never leaves a member held when the debt is paid between two looks at the clock (a busy machine)', async () => {
    // The clock moves by `step` at every look: the wake-up sees a little debt left, and the
    // debt is gone by the next look. The members must be released all the same (they were
    // once left held for good here, and the app's writes then waited forever).
    let t = 0;
    let step = 0;
    const now = () => {
      const value = t;
      t += step;
      return value;
    };
    const budget = new LogBudget({ rateBytes: 1000, burstBytes: 10, readRateBytes: 1000 }, now);
    const member = new Member();
    budget.join(member);
    budget.onRead(15); // 5 bytes of debt: 5 ms at 1 000 B/s
    expect(member.held).toBe(true);
    t = 4.5;
    step = 0.5;
    expect(await until(() => !member.held, 2000)).toBe(true);
    budget.dispose();
  });
});
