// The redactor lives in @slipway/contract since the edge redacts a running app's output with it too (first-minute hazards).
export { Redactor, tail } from '@slipway/contract';
