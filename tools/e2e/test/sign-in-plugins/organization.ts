import { createPublicKey, verify } from 'node:crypto';
import { organizationClient } from 'better-auth/client/plugins';
import type { SharedContext } from './context.js';
import { pluginClient, type PluginsContext } from './context.js';

/** A JWT from `/token`, its EdDSA signature checked against the service's `/jwks` (node:crypto's Ed25519 verifier). */
async function verifiedClaims(ctx: PluginsContext, token: string): Promise<Record<string, unknown>> {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const { kid } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { kid: string };
  const { keys } = (await (await fetch(`${ctx.authUrl}/jwks`)).json()) as { keys: { kid: string }[] };
  const jwk = keys.find((k) => k.kid === kid);
  expect(jwk).toBeDefined();
  const key = createPublicKey({ key: jwk as never, format: 'jwk' });
  expect(verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'))).toBe(true);
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  expect(claims).toMatchObject({ iss: ctx.authUrl, aud: ctx.authUrl });
  return claims;
}

/** Organizations through the platform: the owners' switch, create, invite by email (outbox), accept, the organization in the JWT. */
export function organizationTests(shared: SharedContext) {
  it('organization: creates an organization, invites by email, the invitee signs up and accepts, and the JWT carries the active organization and role', async () => {
    const ctx = shared.current;
    const on = await ctx.settings({ plugins: { organization: { enabled: true } } });
    expect(on.service.plugins.organization).toMatchObject({ enabled: true });
    try {
      const { client: owner } = pluginClient(ctx, [organizationClient()], '198.51.100.71');
      expect((await owner.signUp.email({ email: 'org-owner@example.com', password: 'a long passphrase', name: 'Olga' })).error).toBeNull();
      const created = await owner.organization.create({ name: 'Plugin Org', slug: 'plugin-org' });
      expect(created.error).toBeNull();
      const orgId = created.data!.id;
      const [orgRow] = await ctx.tenantQuery(
        'SELECT o.slug, m.role, u.email FROM service_auth.organizations o JOIN service_auth.members m ON m.organization_id = o.id JOIN service_auth.users u ON u.id = m.user_id WHERE o.id = $1',
        [orgId],
      );
      expect(orgRow).toEqual({ slug: 'plugin-org', role: 'owner', email: 'org-owner@example.com' });

      const invited = await owner.organization.inviteMember({ email: 'org-invitee@example.com', role: 'admin' });
      expect(invited.error).toBeNull();
      const [mail] = await ctx.outbox('org-invitee@example.com');
      expect(mail).toMatchObject({ kind: 'organization_invitation' });
      const invitationId = /Invitation id: ([A-Za-z0-9]{32})/.exec(mail!.text_body)![1]!;
      expect(invitationId).toBe(invited.data!.id);
      expect(mail!.text_body).toContain(`${ctx.origin}/accept-invitation/${invitationId}`);

      const { client: invitee } = pluginClient(ctx, [organizationClient()], '198.51.100.72');
      expect((await invitee.signUp.email({ email: 'org-invitee@example.com', password: 'a long passphrase', name: 'Ines' })).error).toBeNull();
      const accepted = await invitee.organization.acceptInvitation({ invitationId });
      expect(accepted.data).toMatchObject({ invitation: { status: 'accepted' }, member: { organizationId: orgId, role: 'admin' } });
      expect((await owner.organization.listMembers()).data?.total).toBe(2);

      const { data } = await invitee.$fetch<{ token: string }>('/token', { method: 'GET' });
      expect(await verifiedClaims(ctx, data!.token)).toMatchObject({
        email: 'org-invitee@example.com',
        activeOrganizationId: orgId,
        organizationRole: 'admin',
      });
      expect((await invitee.organization.setActive({ organizationId: null })).data).toBeNull();
      const { data: after } = await invitee.$fetch<{ token: string }>('/token', { method: 'GET' });
      expect((await verifiedClaims(ctx, after!.token)).activeOrganizationId).toBeUndefined();
    } finally {
      await ctx.settings({ plugins: { organization: { enabled: false } } });
    }
    const { client: late } = pluginClient(ctx, [organizationClient()], '198.51.100.73');
    expect((await late.organization.list()).error).toMatchObject({ status: 404 });
  });
}
