import { projectJestConfig } from '../../jest.preset.js';

export default projectJestConfig(import.meta.dirname);
