export { SocialModule } from './social.module.js';
export { SocialService } from './social.service.js';
export { OAuthProviderSources, type OAuthProvider, type OAuthProviderSource, type TokenSet } from './oauth-provider.js';
export { socialSignInBody, type SocialSignInInput } from './dto/social.dto.js';
