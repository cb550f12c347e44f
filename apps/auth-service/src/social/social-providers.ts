import type { SocialProfile } from '../users/index.js';

export interface ProviderEndpoints {
  authorize: string;
  token: string;
  userInfo: string;
  emails?: string;
}

export interface SocialProvider {
  id: 'github' | 'google';
  scopes: string[];
  endpoints: ProviderEndpoints;
  /** Reads the signed-in person from the provider's API with the access token. */
  profile(endpoints: ProviderEndpoints, accessToken: string): Promise<Omit<SocialProfile, 'providerId'> | null>;
}

async function getJson(url: string, accessToken: string): Promise<unknown> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'slipway-auth' },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.json();
}

const github: SocialProvider = {
  id: 'github',
  scopes: ['read:user', 'user:email'],
  endpoints: {
    authorize: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    userInfo: 'https://api.github.com/user',
    emails: 'https://api.github.com/user/emails',
  },
  async profile(endpoints, accessToken) {
    const user = (await getJson(endpoints.userInfo, accessToken)) as {
      id?: number | string;
      login?: string;
      name?: string | null;
      email?: string | null;
      avatar_url?: string | null;
    };
    if (user.id === undefined) return null;
    // GitHub's public email may be missing or unverified; the primary verified address from /user/emails decides.
    let email: string | null = null;
    let verified = false;
    if (endpoints.emails) {
      try {
        const emails = (await getJson(endpoints.emails, accessToken)) as { email: string; primary: boolean; verified: boolean }[];
        const primary = emails.find((e) => e.primary) ?? emails[0];
        if (primary) [email, verified] = [primary.email, primary.verified];
      } catch {
        // Without the emails scope, fall back to the profile's public email, unverified.
      }
    }
    email ??= user.email ?? null;
    if (!email) return null;
    return { accountId: String(user.id), email, emailVerified: verified, name: user.name || user.login || email, image: user.avatar_url ?? null };
  },
};

const google: SocialProvider = {
  id: 'google',
  scopes: ['openid', 'email', 'profile'],
  endpoints: {
    authorize: 'https://accounts.google.com/o/oauth2/v2/auth',
    token: 'https://oauth2.googleapis.com/token',
    userInfo: 'https://openidconnect.googleapis.com/v1/userinfo',
  },
  async profile(endpoints, accessToken) {
    const info = (await getJson(endpoints.userInfo, accessToken)) as {
      sub?: string;
      email?: string;
      email_verified?: boolean;
      name?: string;
      picture?: string;
    };
    if (!info.sub || !info.email) return null;
    return { accountId: info.sub, email: info.email, emailVerified: info.email_verified === true, name: info.name || info.email, image: info.picture ?? null };
  },
};

export const SOCIAL_PROVIDERS: Record<string, SocialProvider> = { github, google };

export function endpointsFor(provider: SocialProvider, overrides: Record<string, Record<string, string>>): ProviderEndpoints {
  return { ...provider.endpoints, ...(overrides[provider.id] ?? {}) };
}
