import type { z } from 'zod';
import type { Database, Principal, Queryable } from '../platform/db/database.ts';
import { AppError, notFound, validationError } from '../platform/errors.ts';
import { keyset, likeEscape, page } from './pagination.ts';
import { Contact, type ContactRecord, ContactSummary, type RecentOrder } from './records.ts';

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

/**
 * A phone number as stored (E.164). People write numbers with spaces, dashes, dots and brackets,
 * and international ones with a leading 00; the country code itself cannot be guessed.
 */
export function normalizePhone(raw: string, path = 'phone'): string {
  // "+44 (0)20 …": the bracketed trunk zero is dialled only inside the country.
  let p = raw.replace(/^(\s*(?:\+|00)\s*[1-9]\d{0,2})\s*\(0\)/, '$1').replace(/[\s().\-/]/g, '');
  if (p.startsWith('00')) p = `+${p.slice(2)}`;
  if (!/^\+[1-9][0-9]{6,14}$/.test(p)) {
    throw validationError(
      [{ path, message: 'Use international (E.164) form with the country code, e.g. +14155550123' }],
      'The phone number is not valid',
    );
  }
  return p;
}

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
  const where: string[] = [];
  const params: unknown[] = [];
  const like = (v: string) => {
    params.push(`%${likeEscape(v.trim())}%`);
    return `$${params.length}`;
  };
  if (f.name) {
    const p = like(f.name);
    where.push(`(concat_ws(' ', c.first_name, c.last_name) ilike ${p} or c.company ilike ${p})`);
  }
  if (f.email) where.push(`c.email like lower(${like(f.email)})`);
  if (f.phone) {
    const digits = f.phone.replace(/\D/g, '');
    if (!digits) throw validationError([{ path: 'phone', message: 'Give at least one digit' }]);
    where.push(`c.phone like ${like(digits)}`);
  }
  if (f.tag) {
    params.push(f.tag.trim());
    where.push(`$${params.length} = any (c.tags)`);
  }
  const tail = keyset('c', f.cursor, f.limit, where, params);
  const rows = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<{ r: ContactRecord }>(
        `select to_jsonb(c) as r from public.contacts c
          ${where.length ? `where ${where.join(' and ')}` : ''} ${tail}`,
        params,
      ),
    { readOnly: true },
  );
  const { items, next_cursor } = page(
    rows.map((x) => x.r),
    f.limit,
  );
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
  const cols = FIELDS.filter((k) => fields[k] !== undefined);
  const values = cols.map((k) => (k === 'address' ? JSON.stringify(fields[k]) : fields[k]));
  const [row] = await tx.query<{ r: ContactRecord }>(
    `insert into public.contacts (${[...cols, 'source'].join(', ')})
     values (${[...cols, 'source'].map((_, i) => `$${i + 1}`).join(', ')}) returning to_jsonb(contacts.*) as r`,
    [...values, source],
  );
  return Contact.parse(row?.r);
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
  const sets: string[] = [];
  const params: unknown[] = [contactId];
  for (const k of FIELDS) {
    if (fields[k] === undefined || k === 'tags') continue;
    params.push(k === 'address' && fields[k] !== null ? JSON.stringify(fields[k]) : fields[k]);
    sets.push(`${k} = $${params.length}`);
  }
  if (fields.tags || changes.add_tags || changes.remove_tags) {
    params.push(
      fields.tags ?? null,
      normalizeTags(changes.add_tags ?? []),
      normalizeTags(changes.remove_tags ?? []),
    );
    const n = params.length;
    // Replace (tags), then add and remove; order kept, duplicates dropped.
    sets.push(`tags = array(select t from unnest(coalesce($${n - 2}::text[], tags) || $${n - 1}::text[])
      with ordinality u(t, i) where not t = any ($${n}::text[]) group by t order by min(i))`);
  }
  if (!sets.length) throw validationError([{ path: '', message: 'Give at least one field to change' }]);
  return deps.db.asPrincipal(principal, async (tx) => {
    if (fields.email) await refuseTakenEmail(tx, fields.email, contactId);
    const [row] = await tx.query<{ r: ContactRecord }>(
      `update public.contacts set ${sets.join(', ')} where id = $1 returning to_jsonb(contacts.*) as r`,
      params,
    );
    if (!row) throw notFound('contact');
    return row.r;
  });
}
