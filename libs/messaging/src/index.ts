export * from './channels.js';
export * from './connections.js';
export * from './deploy-producer.js';
export * from './queues.js';
