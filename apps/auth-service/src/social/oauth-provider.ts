import { Injectable } from '@nestjs/common';
import type { Tenant } from '../tenants/index.js';
import type { SocialProfile } from '../users/index.js';

/** What a token endpoint answered. */
export interface TokenSet {
  accessToken: string;
  idToken?: string | undefined;
  scope: string | null;
}

/**
 * One provider as one tenant configured it, for the authorization-code flow that `SocialService`
 * runs (state, PKCE, the state cookie, linking rules): GitHub and Google here, the tenant's
 * OpenID Connect providers from `generic-oauth/` (registered through `OAuthProviderSources`).
 */
export interface OAuthProvider {
  id: string;
  clientId: string;
  scopes: string[];
  authorizeUrl: string;
  /** OpenID Connect: a nonce is sent with the authorize request and must come back in the id_token. */
  usesNonce: boolean;
  /** Sends the token request (form fields given, client credentials added by the provider). */
  exchange(form: Record<string, string>): Promise<TokenSet>;
  /** The signed-in person, from the tokens (the nonce sent, when `usesNonce`); null when there is no usable identity. */
  profile(tokens: TokenSet, nonce: string | undefined): Promise<Omit<SocialProfile, 'providerId'> | null>;
}

/** Finds a provider id among a tenant's providers of one kind; null when it has none of that id. */
export interface OAuthProviderSource {
  resolve(tenant: Tenant, id: string): Promise<OAuthProvider | null>;
}

/** Other features add their kinds of provider here (at module init), so the social routes reach them without social/ importing them. */
@Injectable()
export class OAuthProviderSources {
  private readonly sources: OAuthProviderSource[] = [];

  register(source: OAuthProviderSource): void {
    this.sources.push(source);
  }

  async resolve(tenant: Tenant, id: string): Promise<OAuthProvider | null> {
    for (const source of this.sources) {
      const found = await source.resolve(tenant, id);
      if (found) return found;
    }
    return null;
  }
}
