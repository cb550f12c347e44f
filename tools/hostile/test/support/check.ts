/** One hostile check: a name and what it does against the running scenario (the spec turns each into a test). */
import type { Scenario } from './scenario.js';

export interface Check {
  name: string;
  run(scenario: Scenario): Promise<void>;
}

export function check(name: string, run: (scenario: Scenario) => Promise<void>): Check {
  return { name, run };
}

/** Runs a check as a test: it throws (with its evidence) when the tenant got through. */
export function expectCheck(c: Check, scenario: Scenario): Promise<void> {
  return c.run(scenario);
}
