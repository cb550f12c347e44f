import { projectJestConfig } from '../../jest.preset.js';

// Every test starts the whole platform (four services, Postgres, Redis): two files at once on a
// 2-core machine starve each other past their deadlines, so files run one after another.
export default projectJestConfig(import.meta.dirname, { testTimeout: 180_000, maxWorkers: 1 });
