import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestService } from './service.ts';

export type OutboxMail = { from: string; to: string; subject: string; text: string; link?: string };

/** Every mail the service wrote to its development outbox for `to`, oldest first. */
export async function mailsTo(svc: TestService, to: string): Promise<OutboxMail[]> {
  await svc.services.mail.settled();
  const dir = path.join(svc.dataDir, 'outbox');
  let files: string[];
  try {
    files = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return files
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as OutboxMail)
    .filter((m) => m.to === to);
}

/** The newest mail for `to`; the test fails if there is none. */
export async function lastMailTo(svc: TestService, to: string): Promise<OutboxMail> {
  const mails = await mailsTo(svc, to);
  const last = mails.at(-1);
  if (!last) throw new Error(`no mail to ${to} in the outbox`);
  return last;
}

/** The 6-digit code in a recovery mail. */
export const codeIn = (mail: OutboxMail) => /code: (\d{6})/.exec(mail.text)?.[1] as string;

/** The invitation id and token in an invitation mail's link (`…/invitations#invitation_id=…&token=…`). */
export function invitationIn(mail: OutboxMail): { invitation_id: string; token: string } {
  const fragment = new URLSearchParams(new URL(mail.link as string).hash.slice(1));
  return { invitation_id: fragment.get('invitation_id') as string, token: fragment.get('token') as string };
}
