// Lives in @slipway/contract (the redactor and the edge's first-minute hazards use it too).
export { plainFindings, plainLogText } from '@slipway/contract';
