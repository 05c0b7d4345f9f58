import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';
import type { Queryable } from '../platform/db/database.ts';
import { invalidField } from '../platform/errors.ts';
import { PHONE_INPUT_MAX } from './input-limits.ts';

// Phone numbers are stored in E.164 (contacts.phone's CHECK, migrations/0005) and typed as people
// type them: spaces, dashes, dots, brackets, a leading 00, or national form ("(415) 555-0102"),
// read as a number of the organization's country (organizations.country, migrations/0050).
// libphonenumber-js knows each country's lengths and trunk prefixes; a number is accepted when it
// has a possible length for its country (isPossible), not only when its range is allocated
// today, so test and new ranges are not refused.

const WITH_CODE = 'Enter the phone number with its country code, e.g. +1 415 555 0102';

/** Starts like an international number: `+` or `00`, so no country is needed to read it. */
export const international = (raw: string) => /^\s*(\+|00)/.test(raw);

/**
 * A phone number as stored (E.164), or null when it cannot be one. `country` (ISO 3166-1
 * alpha-2) reads a national number; without it only international numbers are understood.
 */
export function e164(raw: string, country?: string | null): string | null {
  // "+44 (0)20 …": the bracketed trunk zero is dialled only inside the country.
  let text = raw.trim().replace(/^((?:\+|00)\s*[1-9]\d{0,2})\s*\(0\)/, '$1');
  if (text.startsWith('00')) text = `+${text.slice(2)}`;
  if (!text.startsWith('+') && !country) return null;
  const parsed = parsePhoneNumberFromString(text, {
    defaultCountry: (country ?? undefined) as CountryCode | undefined,
    extract: false,
  });
  return parsed?.isPossible() ? parsed.number : null;
}

/**
 * A number a provider gives (a WhatsApp `wa_id`, a `to` answered by Meta) in E.164 when it has
 * E.164's shape, whatever libphonenumber knows of its country's lengths: the provider has
 * already reached it, and a message from it must never be refused for a length rule we keep.
 */
export function providerPhone(raw: string, path = 'id'): string {
  const digits = raw
    .trim()
    .replace(/^(\+|00)/, '')
    .replace(/[\s().\-/]/g, '');
  return /^[1-9][0-9]{6,14}$/.test(digits) ? `+${digits}` : normalizePhone(raw, path);
}

/** `raw` in E.164, or a validation_error on `path` saying how to write it. */
export function normalizePhone(raw: string, path = 'phone', country?: string | null): string {
  const p = e164(raw, country);
  if (p === null) {
    const why =
      country && !international(raw)
        ? `This is not a phone number of ${country}; for another country enter its code, e.g. +44 20 7123 4567`
        : WITH_CODE;
    throw invalidField(path, why);
  }
  return p;
}

/** The caller's organization's country, read in its transaction (null when not set). */
export async function organizationCountry(tx: Queryable): Promise<string | null> {
  const [row] = await tx.query<{ country: string | null }>(
    'select country from public.organizations where id = app.current_org_id()',
  );
  return row?.country ?? null;
}

/**
 * `raw` in E.164 as the caller's organization reads it: the country is looked up only for a
 * number typed in national form.
 */
export async function phoneOfOrganization(tx: Queryable, raw: string, path = 'phone'): Promise<string> {
  return normalizePhone(raw, path, international(raw) ? null : await organizationCountry(tx));
}

/** Typed as a phone number: an international one that reads as one, or digits for a national one. */
const typedAsPhone = (raw: string) =>
  /^[\d\s()+.\-/]+$/.test(raw) &&
  (international(raw) ? e164(raw) !== null : /\d{3}/.test(raw.replace(/\D/g, '')));

/**
 * The input schema: characters a phone number is typed with, so an entry point reports a
 * wrong one beside its other invalid fields in one answer. The domain reads the number itself
 * (phoneOfOrganization), since a national one needs the organization's country.
 */
export const PhoneInput = z
  .string()
  .max(PHONE_INPUT_MAX)
  .refine((raw) => !raw.trim() || typedAsPhone(raw), WITH_CODE);

/** An organization's country: ISO 3166-1 alpha-2, any case in, upper case out. */
export const CountryInput = z
  .string()
  .trim()
  .regex(/^[A-Za-z]{2}$/, 'Choose a country by its two-letter code, e.g. US or GB')
  .transform((c) => c.toUpperCase())
  .refine((c) => isSupportedCountry(c), 'Choose a country by its two-letter code, e.g. US or GB');

/** Columns holding a phone number, by table: /rest/v1 writes store them as the domain does. */
const PHONE_COLUMNS: Record<string, readonly string[]> = {
  contacts: ['phone'],
  orders: ['shipping_phone_number', 'customer_phone'],
};

/**
 * Rows written to `table` with their phone numbers in E.164. The country is asked for (once)
 * only when a number is typed in national form. A value that is not a phone number is left as
 * sent, for the column's CHECK to refuse in the catalogue's words (src/platform/messages.ts).
 */
export async function withStoredPhones(
  table: string,
  rows: Record<string, unknown>[],
  country: () => Promise<string | null>,
): Promise<Record<string, unknown>[]> {
  const columns = PHONE_COLUMNS[table];
  if (!columns) return rows;
  let known: string | null | undefined;
  const out: Record<string, unknown>[] = [];
  for (const row of rows) {
    const next = { ...row };
    for (const c of columns) {
      const raw = next[c];
      if (typeof raw !== 'string' || !raw.trim()) continue;
      if (!international(raw) && known === undefined) known = await country();
      next[c] = e164(raw, known) ?? raw;
    }
    out.push(next);
  }
  return out;
}
