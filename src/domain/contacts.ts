import { z } from 'zod';
import type { Database, Principal, Queryable } from '../platform/db/database.ts';
import { Params } from '../platform/db/params.ts';
import { AppError, notFound, validationError } from '../platform/errors.ts';
import { likeEscape, listPage } from './pagination.ts';
import { type ContactRecord, ContactSummary, type RecentOrder } from './records.ts';

type Deps = { db: Database };

export type ContactFields = {
  first_name?: string | null;
  last_name?: string | null;
  email?: string | null;
  phone?: string | null;
  company?: string | null;
  job_title?: string | null;
  tags?: string[];
  notes?: string | null;
  address?: Record<string, unknown> | null;
};
const FIELDS = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'company',
  'job_title',
  'tags',
  'notes',
  'address',
] as const;

const PHONE_HINT = 'Use international (E.164) form with the country code, e.g. +14155550123';

/**
 * A phone number as stored (E.164), or null when it cannot be one. People write numbers with
 * spaces, dashes, dots and brackets, and international ones with a leading 00; the country code
 * itself cannot be guessed.
 */
function e164(raw: string): string | null {
  // "+44 (0)20 …": the bracketed trunk zero is dialled only inside the country.
  let p = raw.replace(/^(\s*(?:\+|00)\s*[1-9]\d{0,2})\s*\(0\)/, '$1').replace(/[\s().\-/]/g, '');
  if (p.startsWith('00')) p = `+${p.slice(2)}`;
  return /^\+[1-9][0-9]{6,14}$/.test(p) ? p : null;
}

export function normalizePhone(raw: string, path = 'phone'): string {
  const p = e164(raw);
  if (p === null) throw validationError([{ path, message: PHONE_HINT }], 'The phone number is not valid');
  return p;
}

/**
 * The same rule as an input schema, so an entry point reports a bad phone beside its other
 * invalid fields in one answer; the domain still normalizes (and checks) what it stores.
 */
export const PhoneInput = z
  .string()
  .max(40)
  .refine((raw) => !raw.trim() || e164(raw) !== null, PHONE_HINT);

/** The address is jsonb: bound as its JSON text (null stays SQL null). */
const bindable = (k: (typeof FIELDS)[number], v: unknown) =>
  k === 'address' && v !== null ? JSON.stringify(v) : v;

const normalizeTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim()).filter(Boolean))];

/** A contact's email already taken: the caller learns which contact has it. */
async function refuseTakenEmail(tx: Queryable, email: string, except?: string) {
  const [taken] = await tx.query<{ id: string }>(
    'select id from public.contacts where email = lower(btrim($1)) and id is distinct from $2::uuid',
    [email, except ?? null],
  );
  if (taken) {
    throw new AppError(409, 'duplicate', 'A contact with this email already exists', {
      field: 'email',
      existing_id: taken.id,
    });
  }
}

export type ContactFilter = {
  name?: string;
  email?: string;
  phone?: string;
  tag?: string;
  limit: number;
  cursor?: string;
};

export async function listContacts(deps: Deps, principal: Principal, f: ContactFilter) {
  const p = new Params();
  const where: string[] = [];
  const contains = (v: string) => p.add(`%${likeEscape(v.trim())}%`);
  if (f.name) {
    const name = contains(f.name);
    where.push(`(concat_ws(' ', c.first_name, c.last_name) ilike ${name} or c.company ilike ${name})`);
  }
  if (f.email) where.push(`c.email like lower(${contains(f.email)})`);
  if (f.phone) {
    const digits = f.phone.replace(/\D/g, '');
    if (!digits) throw validationError([{ path: 'phone', message: 'Give at least one digit' }]);
    where.push(`c.phone like ${contains(digits)}`);
  }
  if (f.tag) where.push(`${p.add(f.tag.trim())} = any (c.tags)`);
  const { items, next_cursor } = await listPage<ContactRecord>(deps.db, principal, {
    from: 'public.contacts c',
    alias: 'c',
    row: 'to_jsonb(c)',
    where,
    p,
    cursor: f.cursor,
    limit: f.limit,
  });
  return { contacts: items.map((c) => ContactSummary.parse(c)), next_cursor };
}

/** A contact with the orders it placed most recently. */
export async function getContact(deps: Deps, principal: Principal, contactId: string) {
  const [row] = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<{ r: ContactRecord; recent: z.infer<typeof RecentOrder>[] }>(
        `select to_jsonb(c) as r,
                coalesce((select jsonb_agg(jsonb_build_object('id', o.id, 'order_number', o.order_number,
                            'status', o.status, 'total', o.total, 'currency', o.currency, 'created_at', o.created_at)
                          order by o.created_at desc)
                     from (select * from public.orders o where o.organization_id = c.organization_id
                             and o.contact_id = c.id order by o.created_at desc limit 5) o), '[]') as recent
           from public.contacts c where c.id = $1`,
        [contactId],
      ),
    { readOnly: true },
  );
  if (!row) throw notFound('contact');
  return { contact: row.r, recent_orders: row.recent };
}

function prepare(fields: ContactFields): ContactFields {
  const out: ContactFields = { ...fields };
  if (typeof out.phone === 'string') out.phone = out.phone.trim() ? normalizePhone(out.phone) : null;
  if (typeof out.email === 'string') out.email = out.email.trim().toLowerCase() || null;
  if (out.tags) out.tags = normalizeTags(out.tags);
  return out;
}

/** Inserts a contact inside the caller's transaction (also used when an order names a new customer). */
export async function insertContact(tx: Queryable, input: ContactFields, source: string) {
  const fields = prepare(input);
  if (fields.email) await refuseTakenEmail(tx, fields.email);
  const p = new Params();
  const cols = FIELDS.filter((k) => fields[k] !== undefined);
  const values = cols.map((k) => p.add(bindable(k, fields[k])));
  const [row] = await tx.query<{ r: ContactRecord }>(
    `insert into public.contacts (${[...cols, 'source'].join(', ')})
     values (${[...values, p.add(source)].join(', ')}) returning to_jsonb(contacts.*) as r`,
    p.values,
  );
  return row?.r as ContactRecord;
}

export async function createContact(deps: Deps, principal: Principal, input: ContactFields) {
  return deps.db.asPrincipal(principal, (tx) => insertContact(tx, input, 'mcp'));
}

export type ContactChanges = ContactFields & { add_tags?: string[]; remove_tags?: string[] };

export async function updateContact(
  deps: Deps,
  principal: Principal,
  contactId: string,
  changes: ContactChanges,
) {
  const fields = prepare(changes);
  const p = new Params();
  const id = p.add(contactId);
  const sets: string[] = [];
  for (const k of FIELDS) {
    if (fields[k] === undefined || k === 'tags') continue;
    sets.push(`${k} = ${p.add(bindable(k, fields[k]))}`);
  }
  if (fields.tags || changes.add_tags || changes.remove_tags) {
    const replace = p.add(fields.tags ?? null);
    const add = p.add(normalizeTags(changes.add_tags ?? []));
    const remove = p.add(normalizeTags(changes.remove_tags ?? []));
    // Replace (tags), then add and remove; order kept, duplicates dropped.
    sets.push(`tags = array(select t from unnest(coalesce(${replace}::text[], tags) || ${add}::text[])
      with ordinality u(t, i) where not t = any (${remove}::text[]) group by t order by min(i))`);
  }
  if (!sets.length) throw validationError([{ path: '', message: 'Give at least one field to change' }]);
  return deps.db.asPrincipal(principal, async (tx) => {
    if (fields.email) await refuseTakenEmail(tx, fields.email, contactId);
    const [row] = await tx.query<{ r: ContactRecord }>(
      `update public.contacts set ${sets.join(', ')} where id = ${id} returning to_jsonb(contacts.*) as r`,
      p.values,
    );
    if (!row) throw notFound('contact');
    return row.r;
  });
}
