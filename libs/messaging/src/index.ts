export * from './channels.js';
export * from './connections.js';
export * from './deploy-producer.js';
export * from './edge-handoff.js';
export * from './edge-paths.js';
export * from './queues.js';
export * from './routes-publisher.js';
