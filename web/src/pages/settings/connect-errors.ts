import { ApiError } from '../../lib/api';

// The connect's refusals in a shop owner's words: what the provider said about the token and what
// to do next (the service's own message names Graph's check, which is for developers).

const WHO = {
  whatsapp: { brand: 'WhatsApp', noun: 'phone number', next: 'Copy the token again from WhatsApp Manager.' },
  facebook: {
    brand: 'Facebook',
    noun: 'Page',
    next: 'Copy the Page’s token again, or use Connect with Facebook.',
  },
  instagram: {
    brand: 'Instagram',
    noun: 'account',
    next: 'Copy the account’s token again, or use Connect Instagram.',
  },
  shopify: {
    brand: 'Shopify',
    noun: 'shop',
    next: 'Copy the Admin API access token again, or use Install on Shopify.',
  },
} as const;

/** The error to show for a failed connect: the same error, reworded for account_not_verified and provider_error. */
export function connectError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const d = error.details ?? {};
  const who = WHO[d.provider as keyof typeof WHO];
  if (!who) return error;
  const id = String(d.external_id ?? '');
  const reword = (message: string) => new ApiError(message, error.status, error.code, error.details);
  if (error.code === 'account_not_verified')
    return reword(`${who.brand} says this token can’t act for ${who.noun} ${id}. ${who.next}`);
  if (error.code === 'provider_error' && String(d.check ?? '').startsWith('POST'))
    return reword(
      `${who.brand} did not let us receive the messages of ${who.noun} ${id}, so nothing was connected. Check that the token may manage the ${who.noun}’s webhooks, then try again.`,
    );
  if (error.code === 'provider_error')
    return reword(
      `We could not reach ${who.brand} to check this ${who.noun}, so nothing was connected. Try again in a minute.`,
    );
  return error;
}
