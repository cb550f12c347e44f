import { projectJestConfig } from '../../jest.preset.js';

export default projectJestConfig(import.meta.dirname, { testTimeout: 180_000 });
