import { z } from 'zod';
import { invalidField } from '../platform/errors.ts';
import { PHONE_INPUT_MAX } from './input-limits.ts';

// Phone numbers are stored in E.164 (contacts.phone's CHECK, migrations/0005); people type them
// with spaces, dashes, dots and brackets, and international ones with a leading 00.

const PHONE_HINT = 'Use international (E.164) form with the country code, e.g. +14155550123';

/** A phone number as stored, or null when it cannot be one; the country code cannot be guessed. */
export function e164(raw: string): string | null {
  // "+44 (0)20 …": the bracketed trunk zero is dialled only inside the country.
  let p = raw.replace(/^(\s*(?:\+|00)\s*[1-9]\d{0,2})\s*\(0\)/, '$1').replace(/[\s().\-/]/g, '');
  if (p.startsWith('00')) p = `+${p.slice(2)}`;
  return /^\+[1-9][0-9]{6,14}$/.test(p) ? p : null;
}

export function normalizePhone(raw: string, path = 'phone'): string {
  const p = e164(raw);
  if (p === null) throw invalidField(path, PHONE_HINT, 'The phone number is not valid');
  return p;
}

/**
 * The same rule as an input schema, so an entry point reports a bad phone beside its other
 * invalid fields in one answer; the domain still normalizes (and checks) what it stores.
 */
export const PhoneInput = z
  .string()
  .max(PHONE_INPUT_MAX)
  .refine((raw) => !raw.trim() || e164(raw) !== null, PHONE_HINT);
