import { dropApplicationDatabase, signInRuntimeEnv } from '@slipway/sign-in-core';
import { keyringFromMasterKey } from '@slipway/crypto';
import type { PrismaClient } from '@slipway/platform-schema';
import { asApplicationId, openPlatformData } from '@slipway/platform-data';
import { TEST_SERVER_URL } from '@slipway/testing';
import { deployShop, type DeployedApp } from './deployed-app.js';
import { startPlatform, type Platform } from './platform.js';

export interface ShopOnPlatform {
  platform: Platform;
  prisma: PrismaClient;
  app: DeployedApp;
  applicationId: string;
  close(): Promise<void>;
}

/** The platform as processes, an owner and application made through its API, sign-in switched on, the shop fixture deployed. */
export async function startShopOnPlatform(label: string, authEnv: Record<string, string> = {}): Promise<ShopOnPlatform> {
  const platform = await startPlatform(label, authEnv);
  const data = openPlatformData({ DATABASE_URL: platform.db.url }, { poolSize: 2 });
  const prisma = data.infrastructure.prisma;
  let applicationId: string | undefined;
  let app: DeployedApp | undefined;
  const close = async () => {
    await app?.stop();
    await data.close();
    if (applicationId) await dropApplicationDatabase(TEST_SERVER_URL, applicationId);
    await platform.close();
  };
  try {
    let cookie = '';
    const dashboard = async (path: string, body: unknown) => {
      const res = await fetch(`${platform.gatewayUrl}/dashboard/api${path}`, {
        method: 'POST',
        headers: { origin: 'http://localhost:3000', 'x-slipway-csrf': '1', 'content-type': 'application/json', cookie },
        body: JSON.stringify(body),
      });
      const set = res.headers.getSetCookie().find((c) => c.startsWith('slipway_session='));
      if (set) cookie = set.split(';')[0]!;
      return (await res.json()) as Record<string, string>;
    };
    await dashboard('/session/sign-up', { email: `owner-${label}@example.com`, password: 'correct horse battery', name: 'Owner' });
    applicationId = (await dashboard('/applications', { name: 'Shop' }))['id']!;
    const pat = (await dashboard('/tokens', { name: label }))['token']!;
    const enabled = await fetch(`${platform.gatewayUrl}/api/v1/auth?applicationId=${applicationId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pat}` },
    });
    if (enabled.status !== 201) throw new Error(`switching sign-in on answered ${enabled.status}: ${await enabled.text()}`);
    const runtime = await signInRuntimeEnv(data.signInServices, keyringFromMasterKey(platform.masterKey), asApplicationId(applicationId), {
      authPublicUrl: platform.authUrl,
      appDatabasesUrl: TEST_SERVER_URL,
    });
    app = await deployShop(runtime.runtime);
    return { platform, prisma, app, applicationId, close };
  } catch (error) {
    await close();
    throw error;
  }
}
