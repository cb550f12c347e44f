import type { Redis } from 'ioredis';
import { routesChannel, type RoutesMessage } from './channels.js';

/**
 * The one publisher of the routes channel: tells every edge replica to reload one application's
 * route from the database (`{applicationId}`: a release made live, a preview removed) or its
 * whole table (`{all: true}`: a domain changed). Rejects when Redis does; the caller decides
 * whether that is fatal (a missed message is repaired by the reload an edge does on reconnecting).
 */
export async function publishRoutesChanged(redis: Pick<Redis, 'publish'>, prefix: string, message: RoutesMessage): Promise<void> {
  const channel = routesChannel(prefix);
  await redis.publish(channel.name, channel.encode(message));
}
