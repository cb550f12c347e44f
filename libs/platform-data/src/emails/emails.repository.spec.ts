import { scratchPlatform } from '../../test/scratch-platform.js';
import type { PlatformInfrastructure } from '../infrastructure.js';
import { type EmailsRepository } from './emails.repository.js';

describe('EmailsRepository (real Postgres)', () => {
  const scratch = scratchPlatform('pd-emails', { poolSize: 3 });
  let platform: PlatformInfrastructure;
  let emails: EmailsRepository;
  beforeAll(() => {
    ({
      platform,
      data: { emails },
    } = scratch);
  });
  const application = () => scratch.application();
  const mail = (subject: string) => ({ kind: 'password_reset', to: 'ada@example.com', subject, text: `body of ${subject}` });

  it('puts an email in the outbox and marks it sent or failed', async () => {
    const app = await application();
    const sent = await emails.add(app, mail('one'));
    const failed = await emails.add(app, mail('two'));
    expect((await emails.latest(app, 10)).map((e) => e.status)).toEqual(['outbox', 'outbox']);
    const at = new Date();
    await emails.markSent(sent, at);
    await emails.markFailed(failed);
    const byId = new Map((await emails.latest(app, 10)).map((e) => [e.id, e]));
    expect(byId.get(sent)).toMatchObject({
      status: 'sent',
      sentAt: at,
      toAddress: 'ada@example.com',
      subject: 'one',
      textBody: 'body of one',
      kind: 'password_reset',
    });
    expect(byId.get(failed)).toMatchObject({ status: 'failed', sentAt: null });
  });

  it("lists one application's latest emails, newest first, at most `limit`", async () => {
    const app = await application();
    const other = await application();
    for (const [i, subject] of ['a', 'b', 'c'].entries()) {
      // Distinct times: rows written within one millisecond would tie.
      const id = await emails.add(app, mail(subject));
      await platform.prisma.email.update({ where: { id }, data: { createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)) } });
    }
    await emails.add(other, mail('theirs'));
    expect((await emails.latest(app, 2)).map((e) => e.subject)).toEqual(['c', 'b']);
  });
});
