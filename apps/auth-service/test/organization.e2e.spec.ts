import { createAuthClient } from 'better-auth/client';
import { organizationClient } from 'better-auth/client/plugins';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import pg from 'pg';
import { TEST_SERVER_URL } from '@slipway/testing';
import { browserLikeFetch, startAuthHarness, originOf, type AuthHarness } from './harness.js';

/** Node has no cookie jar: a fetch that keeps cookies and sends the page's Origin, as a browser would. */
const fetchFrom = (origin: string) => browserLikeFetch(origin).impl;

const PASSWORD = 'correct horse battery';

describe('organization plugin (Better Auth’s organizationClient against the service)', () => {
  let h: AuthHarness;
  let shop: { applicationId: string; authUrl: string };
  let other: { applicationId: string; authUrl: string };
  let plain: { applicationId: string; authUrl: string };
  let closed: { applicationId: string; authUrl: string };
  const dbs: pg.Client[] = [];

  const on = { plugins: { organization: { enabled: true } } };
  beforeAll(async () => {
    h = await startAuthHarness('authorg');
    shop = await h.createTenant('orgshop', { settings: on });
    other = await h.createTenant('orgother', { settings: on });
    plain = await h.createTenant('orgplain');
    closed = await h.createTenant('orgclosed', { settings: { plugins: { organization: { enabled: true, allowUserToCreateOrganization: false } } } });
  });
  afterAll(async () => {
    for (const db of dbs) await db.end();
    await h?.close();
  });

  async function tenantDb(applicationId: string): Promise<pg.Client> {
    const database = await h.prisma.applicationDatabase.findUniqueOrThrow({ where: { applicationId } });
    const client = new pg.Client({ connectionString: TEST_SERVER_URL.replace(/\/[^/]*$/, `/${database.databaseName}`) });
    await client.connect();
    dbs.push(client);
    return client;
  }

  function clientFor(tenant: { authUrl: string }, slug: string) {
    return createAuthClient({ baseURL: tenant.authUrl, plugins: [organizationClient()], fetchOptions: { customFetchImpl: fetchFrom(originOf(slug)) } });
  }
  type Client = ReturnType<typeof clientFor>;

  async function user(email: string, tenant = shop, slug = 'orgshop'): Promise<Client> {
    const client = clientFor(tenant, slug);
    const up = await client.signUp.email({ email, password: PASSWORD, name: email.split('@')[0]! });
    expect(up.error).toBeNull();
    return client;
  }

  async function claims(client: Client, tenant = shop): Promise<JWTPayload> {
    const { data, error } = await client.$fetch<{ token: string }>('/token', { method: 'GET' });
    expect(error).toBeNull();
    const { payload } = await jwtVerify(data!.token, createRemoteJWKSet(new URL(`${tenant.authUrl}/jwks`)), {
      issuer: tenant.authUrl,
      audience: tenant.authUrl,
    });
    return payload;
  }

  /**
   * The database's change notifications (migration 20261123090000 and this plugin's members
   * triggers) would evict cached sessions by themselves, within milliseconds: switched off here so
   * only the service's own invalidation (before it answers) can make the next read current.
   */
  const TRIGGERS = [
    ['sessions', 'sessions_updated'],
    ['sessions', 'sessions_deleted'],
    ['members', 'members_inserted'],
    ['members', 'members_updated'],
    ['members', 'members_deleted'],
  ];
  async function withoutChangeNotifications(work: () => Promise<void>): Promise<void> {
    const db = await tenantDb(shop.applicationId);
    for (const [table, trigger] of TRIGGERS) await db.query(`ALTER TABLE service_auth.${table} DISABLE TRIGGER ${trigger}`);
    try {
      await work();
    } finally {
      for (const [table, trigger] of TRIGGERS) await db.query(`ALTER TABLE service_auth.${table} ENABLE TRIGGER ${trigger}`);
    }
  }

  async function invitationIdMailedTo(email: string, applicationId = shop.applicationId): Promise<string> {
    const mail = await h.prisma.email.findFirstOrThrow({ where: { applicationId, toAddress: email }, orderBy: { createdAt: 'desc' } });
    expect(mail.kind).toBe('organization_invitation');
    const id = /Invitation id: ([A-Za-z0-9]{32})/.exec(mail.textBody)![1]!;
    expect(mail.textBody).toContain(`/accept-invitation/${id}`);
    return id;
  }

  let orgId: string;
  let owner: Client;
  let admin: Client;
  let member: Client;

  it('creates an organization (rows in service_auth, active on the session, in the JWT’s claims), invites by email, and the invited user signs up and accepts', async () => {
    const db = await tenantDb(shop.applicationId);
    owner = await user('olivia@example.com');
    expect((await claims(owner)).activeOrganizationId).toBeUndefined();
    expect((await owner.organization.checkSlug({ slug: 'acme' })).data).toEqual({ status: true });
    const created = await owner.organization.create({ name: 'Acme', slug: 'acme', metadata: { plan: 'pro' } });
    expect(created.error).toBeNull();
    orgId = created.data!.id;
    expect(created.data).toMatchObject({
      name: 'Acme',
      slug: 'acme',
      logo: null,
      metadata: { plan: 'pro' },
      members: [{ organizationId: orgId, role: 'owner' }],
    });
    const orgRows = await db.query('SELECT name, slug, metadata FROM service_auth.organizations WHERE id = $1', [orgId]);
    expect(orgRows.rows).toEqual([{ name: 'Acme', slug: 'acme', metadata: '{"plan":"pro"}' }]);
    const ownerRows = await db.query(
      'SELECT u.email, m.role FROM service_auth.members m JOIN service_auth.users u ON u.id = m.user_id WHERE m.organization_id = $1',
      [orgId],
    );
    expect(ownerRows.rows).toEqual([{ email: 'olivia@example.com', role: 'owner' }]);
    expect((await owner.getSession()).data?.session.activeOrganizationId).toBe(orgId);
    expect(await claims(owner)).toMatchObject({ activeOrganizationId: orgId, organizationRole: 'owner', email: 'olivia@example.com' });

    expect((await owner.organization.checkSlug({ slug: 'acme' })).error).toMatchObject({ status: 400, code: 'ORGANIZATION_SLUG_ALREADY_TAKEN' });
    expect((await owner.organization.create({ name: 'Again', slug: 'acme' })).error).toMatchObject({ status: 400, code: 'ORGANIZATION_ALREADY_EXISTS' });

    const invited = await owner.organization.inviteMember({ email: 'Bob@Example.com', role: 'admin' });
    expect(invited.error).toBeNull();
    expect(invited.data).toMatchObject({ email: 'bob@example.com', role: 'admin', status: 'pending', organizationId: orgId });
    const hours = (new Date(invited.data!.expiresAt).getTime() - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(47.9);
    expect(hours).toBeLessThanOrEqual(48);
    const invitationId = await invitationIdMailedTo('bob@example.com');
    expect(invitationId).toBe(invited.data!.id);
    expect((await db.query('SELECT email, role, status FROM service_auth.invitations WHERE id = $1', [invitationId])).rows).toEqual([
      { email: 'bob@example.com', role: 'admin', status: 'pending' },
    ]);
    expect((await owner.organization.inviteMember({ email: 'bob@example.com', role: 'admin' })).error).toMatchObject({
      status: 400,
      code: 'USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION',
    });

    admin = await user('bob@example.com');
    const seen = await admin.organization.getInvitation({ query: { id: invitationId } });
    expect(seen.data).toMatchObject({ id: invitationId, organizationName: 'Acme', organizationSlug: 'acme', inviterEmail: 'olivia@example.com' });
    const accepted = await admin.organization.acceptInvitation({ invitationId });
    expect(accepted.error).toBeNull();
    expect(accepted.data).toMatchObject({ invitation: { id: invitationId, status: 'accepted' }, member: { organizationId: orgId, role: 'admin' } });
    expect((await admin.getSession()).data?.session.activeOrganizationId).toBe(orgId);
    expect(await claims(admin)).toMatchObject({ activeOrganizationId: orgId, organizationRole: 'admin' });
    expect((await admin.organization.acceptInvitation({ invitationId })).error).toMatchObject({ status: 400, code: 'INVITATION_NOT_FOUND' });

    await owner.organization.inviteMember({ email: 'carol@example.com', role: 'member' });
    member = await user('carol@example.com');
    expect((await member.organization.acceptInvitation({ invitationId: await invitationIdMailedTo('carol@example.com') })).error).toBeNull();

    const listed = await owner.organization.listMembers();
    expect(listed.data?.total).toBe(3);
    expect(listed.data?.members.map((m) => [m.user.email, m.role])).toEqual([
      ['olivia@example.com', 'owner'],
      ['bob@example.com', 'admin'],
      ['carol@example.com', 'member'],
    ]);
    const full = await member.organization.getFullOrganization();
    expect(full.data).toMatchObject({ id: orgId, name: 'Acme', invitations: [] });
    expect(full.data?.members).toHaveLength(3);
    expect((await owner.organization.getFullOrganization()).data?.invitations).toHaveLength(2);
    expect((await member.organization.list()).data?.map((o) => o.slug)).toEqual(['acme']);
    expect((await member.organization.getActiveMember()).data).toMatchObject({ role: 'member', user: { email: 'carol@example.com' } });
  });

  it('enforces the roles: a member cannot invite or remove, an admin cannot remove the owner nor hand out the owner role', async () => {
    expect((await member.organization.inviteMember({ email: 'x@example.com', role: 'member' })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION',
    });
    expect((await member.organization.removeMember({ memberIdOrEmail: 'bob@example.com' })).error).toMatchObject({
      status: 401,
      code: 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER',
    });
    expect((await member.organization.update({ data: { name: 'Mine' } })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION',
    });
    expect((await admin.organization.removeMember({ memberIdOrEmail: 'olivia@example.com' })).error).toMatchObject({
      status: 400,
      code: 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
    });
    // With a second owner the count allows it: the remover's own role is what refuses.
    const coOwner = await owner.organization.inviteMember({ email: 'otto@example.com', role: 'owner' });
    const otto = await user('otto@example.com');
    expect((await otto.organization.acceptInvitation({ invitationId: coOwner.data!.id })).data?.member.role).toBe('owner');
    expect((await admin.organization.removeMember({ memberIdOrEmail: 'otto@example.com' })).error).toMatchObject({
      status: 400,
      code: 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
    });
    expect((await owner.organization.removeMember({ memberIdOrEmail: 'otto@example.com' })).data?.member.role).toBe('owner');
    expect((await admin.organization.inviteMember({ email: 'y@example.com', role: 'owner' })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE',
    });
    expect((await admin.organization.inviteMember({ email: 'y@example.com', role: 'wizard' as 'member' })).error).toMatchObject({
      status: 400,
      code: 'ROLE_NOT_FOUND',
    });
    expect((await admin.organization.delete({ organizationId: orgId })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION',
    });
    expect((await owner.organization.leave({ organizationId: orgId })).error).toMatchObject({
      status: 400,
      code: 'YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER',
    });

    expect((await owner.organization.hasPermission({ permissions: { organization: ['delete'] } })).data).toEqual({ error: null, success: true });
    expect((await admin.organization.hasPermission({ permissions: { organization: ['delete'] } })).data).toEqual({ error: null, success: false });
    expect((await admin.organization.hasPermission({ permissions: { member: ['create', 'delete'], invitation: ['create'] } })).data?.success).toBe(true);
    expect((await member.organization.hasPermission({ permissions: { invitation: ['create'] } })).data?.success).toBe(false);
    expect((await member.organization.hasPermission({ permissions: { ac: ['read'] } })).data?.success).toBe(true);
    expect((await member.organization.listInvitations()).error).toMatchObject({ status: 403, code: 'YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS' });
  });

  it('a role change and a removal reach the member’s cached session and JWT at once; removal clears the active organization of every session', () =>
    withoutChangeNotifications(async () => {
      const carolMember = (await owner.organization.listMembers()).data!.members.find((m) => m.user.email === 'carol@example.com')!;
      // Warm the session cache (and its JWT) first.
      expect(await claims(member)).toMatchObject({ organizationRole: 'member' });
      expect(await claims(member)).toMatchObject({ organizationRole: 'member' });
      const changed = await owner.organization.updateMemberRole({ memberId: carolMember.id, role: 'admin' });
      expect(changed.data).toMatchObject({ id: carolMember.id, role: 'admin' });
      expect(await claims(member)).toMatchObject({ activeOrganizationId: orgId, organizationRole: 'admin' });
      expect((await admin.organization.updateMemberRole({ memberId: carolMember.id, role: 'owner' })).error).toMatchObject({
        status: 403,
        code: 'YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER',
      });

      // A second session of Carol's, also in Acme.
      const carolElsewhere = clientFor(shop, 'orgshop');
      await carolElsewhere.signIn.email({ email: 'carol@example.com', password: PASSWORD });
      expect((await carolElsewhere.organization.setActive({ organizationId: orgId })).error).toBeNull();
      expect(await claims(carolElsewhere)).toMatchObject({ organizationRole: 'admin' });

      const removed = await owner.organization.removeMember({ memberIdOrEmail: carolMember.id });
      expect(removed.data).toMatchObject({ member: { id: carolMember.id, userId: carolMember.userId } });
      for (const session of [member, carolElsewhere]) {
        expect((await session.getSession()).data?.session.activeOrganizationId).toBeNull();
        const payload = await claims(session);
        expect(payload.activeOrganizationId).toBeUndefined();
        expect(payload.organizationRole).toBeUndefined();
      }
      expect((await member.organization.setActive({ organizationId: orgId })).error).toMatchObject({
        status: 403,
        code: 'USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION',
      });
    }));

  it('set-active switches the organization on the session and in the JWT (answering after the cache is invalidated)', () =>
    withoutChangeNotifications(async () => {
      const second = await owner.organization.create({ name: 'Second', slug: 'second', keepCurrentActiveOrganization: true });
      expect(second.error).toBeNull();
      expect(await claims(owner)).toMatchObject({ activeOrganizationId: orgId });
      expect((await owner.organization.setActive({ organizationSlug: 'second' })).data).toMatchObject({ id: second.data!.id, slug: 'second' });
      expect(await claims(owner)).toMatchObject({ activeOrganizationId: second.data!.id, organizationRole: 'owner' });
      expect((await owner.getSession()).data?.session.activeOrganizationId).toBe(second.data!.id);
      expect((await owner.organization.setActive({ organizationId: null })).data).toBeNull();
      expect((await claims(owner)).activeOrganizationId).toBeUndefined();
      expect((await owner.organization.list()).data?.map((o) => o.slug).sort()).toEqual(['acme', 'second']);
      // Deleting the organization clears it from the sessions where it was active.
      await owner.organization.setActive({ organizationId: second.data!.id });
      expect((await owner.organization.delete({ organizationId: second.data!.id })).data).toMatchObject({ id: second.data!.id });
      expect((await owner.getSession()).data?.session.activeOrganizationId).toBeNull();
      expect((await claims(owner)).activeOrganizationId).toBeUndefined();
      await owner.organization.setActive({ organizationId: orgId });
    }));

  it('a role changed by anyone else’s write to service_auth.members (the trigger) reaches the cached JWT', async () => {
    const db = await tenantDb(shop.applicationId);
    expect(await claims(admin)).toMatchObject({ organizationRole: 'admin' });
    await db.query(`UPDATE service_auth.members SET role = 'member' WHERE organization_id = $1 AND role = 'admin'`, [orgId]);
    const deadline = Date.now() + 10_000;
    let role: unknown;
    while (Date.now() < deadline && (role = (await claims(admin)).organizationRole) !== 'member') await new Promise((r) => setTimeout(r, 50));
    expect(role).toBe('member');
  });

  it('refuses to accept: the wrong user, an expired invitation, another application’s invitation id', async () => {
    const db = await tenantDb(shop.applicationId);
    const forDave = await owner.organization.inviteMember({ email: 'dave@example.com', role: 'member' });
    const daveInvitation = forDave.data!.id;
    const eve = await user('eve@example.com');
    expect((await eve.organization.acceptInvitation({ invitationId: daveInvitation })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION',
    });
    expect((await eve.organization.getInvitation({ query: { id: daveInvitation } })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION',
    });
    expect((await eve.organization.rejectInvitation({ invitationId: daveInvitation })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION',
    });
    expect(
      (
        await db.query('SELECT count(*)::int AS n FROM service_auth.members m JOIN service_auth.users u ON u.id = m.user_id WHERE u.email = $1', [
          'eve@example.com',
        ])
      ).rows[0].n,
    ).toBe(0);

    // Dave on another application (same email) holds an id that application never issued.
    const daveOther = await user('dave@example.com', other, 'orgother');
    expect((await daveOther.organization.acceptInvitation({ invitationId: daveInvitation })).error).toMatchObject({
      status: 400,
      code: 'INVITATION_NOT_FOUND',
    });
    expect((await daveOther.organization.getInvitation({ query: { id: daveInvitation } })).error).toMatchObject({ status: 400, code: 'INVITATION_NOT_FOUND' });

    // Expired: 48 hours passed.
    await db.query(`UPDATE service_auth.invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, [daveInvitation]);
    const dave = await user('dave@example.com');
    expect((await dave.organization.acceptInvitation({ invitationId: daveInvitation })).error).toMatchObject({ status: 400, code: 'INVITATION_NOT_FOUND' });
    expect((await db.query('SELECT status FROM service_auth.invitations WHERE id = $1', [daveInvitation])).rows[0].status).toBe('pending');
    expect((await dave.getSession()).data?.session.activeOrganizationId).toBeNull();

    // A fresh one works; a canceled one does not.
    const again = await owner.organization.inviteMember({ email: 'dave@example.com', role: 'member' });
    expect((await owner.organization.cancelInvitation({ invitationId: again.data!.id })).data).toMatchObject({ status: 'canceled' });
    expect((await dave.organization.acceptInvitation({ invitationId: again.data!.id })).error).toMatchObject({ status: 400, code: 'INVITATION_NOT_FOUND' });
    const third = await owner.organization.inviteMember({ email: 'dave@example.com', role: 'member' });
    expect((await dave.organization.acceptInvitation({ invitationId: third.data!.id })).error).toBeNull();
  });

  it('answers 404 on every organization route while the plugin is off, and 403 create when users may not create organizations', async () => {
    const off = await user('off@example.com', plain, 'orgplain');
    expect((await off.organization.create({ name: 'Nope', slug: 'nope' })).error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect((await off.organization.list()).error).toMatchObject({ status: 404 });
    // Checked before the body: a malformed body is still an unknown path.
    expect((await off.$fetch('/organization/set-active', { method: 'POST', body: { organizationId: 42 } })).error).toMatchObject({ status: 404 });
    expect((await off.organization.acceptInvitation({ invitationId: 'x'.repeat(32) })).error).toMatchObject({ status: 404 });

    const shut = await user('shut@example.com', closed, 'orgclosed');
    expect((await shut.organization.create({ name: 'Nope', slug: 'nope' })).error).toMatchObject({
      status: 403,
      code: 'YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION',
    });
    const anonymous = clientFor(shop, 'orgshop');
    expect((await anonymous.organization.create({ name: 'Nope', slug: 'nope' })).error).toMatchObject({ status: 401 });
  });
});
