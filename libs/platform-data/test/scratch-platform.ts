import { createTestDatabase, type TestDatabase } from '@slipway/testing';
import { asApplicationId, asOwnerId, type ApplicationId, type OwnerId } from '../src/ids.js';
import type { PlatformInfrastructure, PlatformWiring } from '../src/infrastructure.js';
import { openPlatformData, type PlatformData } from '../src/platform-data.module.js';

/** A spec's scratch platform database, with the repositories over it. */
export interface ScratchPlatform {
  readonly db: TestDatabase;
  readonly data: PlatformData;
  readonly platform: PlatformInfrastructure;
  /** A new owner; the email defaults to a fresh one. */
  owner(email?: string): Promise<OwnerId>;
  /** A new application of `ownerId` (of a new owner when omitted); the slug defaults to a fresh one. */
  application(ownerId?: OwnerId, slug?: string): Promise<ApplicationId>;
}

/**
 * Called in a `describe`: makes the scratch database and opens the platform over it before the
 * specs' tests (in its own `beforeAll`, so later `beforeAll`s can use it) and closes and drops it
 * after them. Every repository spec of this lib starts this way.
 */
export function scratchPlatform(label: string, wiring: PlatformWiring): ScratchPlatform {
  let opened: { db: TestDatabase; data: PlatformData } | undefined;
  let n = 0;
  const current = () => {
    if (!opened) throw new Error('scratchPlatform is used only inside its describe, after its beforeAll');
    return opened;
  };
  beforeAll(async () => {
    const db = await createTestDatabase(label);
    opened = { db, data: openPlatformData({ DATABASE_URL: db.url }, wiring) };
  });
  afterAll(async () => {
    if (!opened) return;
    await opened.data.close();
    await opened.db.drop();
  });

  const scratch: ScratchPlatform = {
    get db() {
      return current().db;
    },
    get data() {
      return current().data;
    },
    get platform() {
      return current().data.infrastructure;
    },
    async owner(email) {
      n++;
      return asOwnerId((await scratch.platform.prisma.owner.create({ data: { email: email ?? `owner${n}@example.com` } })).id);
    },
    async application(ownerId, slug) {
      const owner = ownerId ?? (await scratch.owner());
      n++;
      const app = await scratch.platform.prisma.application.create({ data: { ownerId: owner, name: `a${n}`, slug: slug ?? `app-${n}` } });
      return asApplicationId(app.id);
    },
  };
  return scratch;
}
