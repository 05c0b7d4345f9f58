import type { z } from 'zod';
import type { Principal, Queryable } from '../platform/db/database.ts';
import { Params } from '../platform/db/params.ts';
import { alreadyExists, invalidField, notFound } from '../platform/errors.ts';
import type { Deps, Source } from './deps.ts';
import { CONTACT_FIELDS, ContactChanges, NewContact, parseInput } from './inputs.ts';
import { likeEscape, listPage } from './pagination.ts';
import { phoneOfOrganization } from './phone.ts';
import { type ContactRecord, ContactSummary, type RecentOrder } from './records.ts';
import { searchCandidates } from './search-candidates.ts';

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
const FIELDS = Object.keys(CONTACT_FIELDS) as (keyof typeof CONTACT_FIELDS)[];

/** The address is jsonb: bound as its JSON text (null stays SQL null). */
const bindable = (k: (typeof FIELDS)[number], v: unknown) =>
  k === 'address' && v !== null ? JSON.stringify(v) : v;

const normalizeTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim()).filter(Boolean))];

/** A contact's email already taken: the caller learns which contact has it. */
async function refuseTakenEmail(tx: Queryable, email: string, except?: string) {
  const [taken] = await tx.query<{ id: string }>(
    `select id from public.contacts where organization_id = app.current_org_id()
        and email = lower(btrim($1)) and id is distinct from $2::uuid`,
    [email, except ?? null],
  );
  if (taken) {
    throw alreadyExists('A contact with this email already exists', {
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

export async function listContacts(deps: Pick<Deps, 'db'>, principal: Principal, f: ContactFilter) {
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
    if (!digits) throw invalidField('phone', 'Give at least one digit');
    where.push(`c.phone like ${contains(digits)}`);
  }
  if (f.tag) where.push(`${p.add(f.tag.trim())} = any (c.tags)`);
  // The text filters ask the trigram index for candidates first; the conditions above decide.
  const terms = [f.name, f.email, f.phone?.replace(/\D/g, '')].filter((t): t is string => Boolean(t));
  const { items, next_cursor } = await listPage<ContactRecord>(deps, principal, {
    from: 'public.contacts c',
    alias: 'c',
    row: 'to_jsonb(c)',
    where,
    p,
    cursor: f.cursor,
    limit: f.limit,
    narrow: terms.length ? (tx) => searchCandidates(tx, 'contacts', 'c', terms, p) : undefined,
  });
  return { contacts: items.map((c) => ContactSummary.parse(c)), next_cursor };
}

/** A contact with the orders it placed most recently. */
export async function getContact(deps: Pick<Deps, 'db'>, principal: Principal, contactId: string) {
  // One statement: sent with the claims as one implicit transaction (db.queryAs).
  const [row] = await deps.db.queryAs<{ r: ContactRecord; recent: z.infer<typeof RecentOrder>[] }>(
    principal,
    `select to_jsonb(c) as r,
            coalesce((select jsonb_agg(jsonb_build_object('id', o.id, 'order_number', o.order_number,
                        'status', o.status, 'total', o.total, 'currency', o.currency, 'created_at', o.created_at)
                      order by o.created_at desc, o.id desc)
                 from (select * from public.orders o where o.organization_id = c.organization_id
                         and o.contact_id = c.id order by o.created_at desc, o.id desc limit 5) o), '[]') as recent
       from public.contacts c where c.id = $1`,
    [contactId],
    { readOnly: true },
  );
  if (!row) throw notFound('contact');
  return { contact: row.r, recent_orders: row.recent };
}

/** The fields as stored: a phone in E.164 (a national one read with the organization's country). */
async function prepare(tx: Queryable, fields: ContactFields): Promise<ContactFields> {
  const out: ContactFields = { ...fields };
  if (typeof out.phone === 'string')
    out.phone = out.phone.trim() ? await phoneOfOrganization(tx, out.phone) : null;
  if (typeof out.email === 'string') out.email = out.email.trim().toLowerCase() || null;
  if (out.tags) out.tags = normalizeTags(out.tags);
  return out;
}

/** Inserts a contact inside the caller's transaction (also used when an order names a new customer). */
export async function insertContact(tx: Queryable, input: ContactFields, source: Source) {
  const fields = await prepare(tx, input);
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

/** A new contact, checked against the domain's limits (inputs.ts); `source` is the entry point. */
export async function createContact(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  input: z.input<typeof NewContact>,
  source: Source,
) {
  const fields = parseInput(NewContact, input);
  return deps.db.asPrincipal(principal, (tx) => insertContact(tx, fields, source));
}

export async function updateContact(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  contactId: string,
  input: z.input<typeof ContactChanges>,
) {
  const changes = parseInput(ContactChanges, input);
  return deps.db.asPrincipal(principal, async (tx) => {
    const fields = await prepare(tx, changes);
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
    if (!sets.length) throw invalidField('', 'Give at least one field to change');
    if (fields.email) await refuseTakenEmail(tx, fields.email, contactId);
    const [row] = await tx.query<{ r: ContactRecord }>(
      `update public.contacts set ${sets.join(', ')} where id = ${id} returning to_jsonb(contacts.*) as r`,
      p.values,
    );
    if (!row) throw notFound('contact');
    return row.r;
  });
}
