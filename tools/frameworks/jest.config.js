import { projectJestConfig } from '../../jest.preset.js';

// Every test awaits its own deploy, started in beforeAll with the others: the wait is the deploy queue's.
export default projectJestConfig(import.meta.dirname, { testTimeout: 30 * 60_000 });
