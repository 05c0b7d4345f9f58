import { z } from 'zod';
import { createContact, getContact, listContacts, updateContact } from '../../domain/contacts.ts';
import { Contact, ContactSummary, RecentOrder } from '../../domain/records.ts';
import { defineTool } from '../tool.ts';
import { cursor, limit, nextCursor, READ } from './common.ts';

const fields = {
  first_name: z.string().trim().max(200).describe('Given name'),
  last_name: z.string().trim().max(200).describe('Family name'),
  email: z.email().max(320).describe('Email address; unique within the organization'),
  phone: z
    .string()
    .max(40)
    .describe(
      'Phone in international form with country code, e.g. +14155550123 (spaces and dashes are fine)',
    ),
  company: z.string().trim().max(200).describe('Company or organization name'),
  job_title: z.string().trim().max(200).describe('Job title'),
  tags: z.array(z.string().trim().min(1).max(100)).max(50).describe('Labels such as "vip" or "wholesale"'),
  notes: z.string().max(10_000).describe('Free-form notes'),
  address: z
    .record(z.string(), z.unknown())
    .describe('Postal address as an object, e.g. {"line1","city","country"}'),
};

const contactId = z.guid().describe('The contact’s id (from svc_list_contacts or svc_search)');

export const listContactsTool = defineTool({
  name: 'svc_list_contacts',
  title: 'List contacts',
  description:
    'Lists the organization’s contacts, newest first, optionally filtered by name, email, phone or tag. Use it to browse or to find a customer when you know part of their details (svc_search looks across orders and inventory too). Returns compact contacts and next_cursor for the next page.',
  scope: 'read',
  input: z.object({
    name: z.string().max(200).optional().describe('Part of the first name, last name or company'),
    email: z.string().max(320).optional().describe('Part of the email address'),
    phone: z.string().max(40).optional().describe('Digits of the phone number, in any format'),
    tag: z.string().max(100).optional().describe('Only contacts with this exact tag'),
    limit: limit(),
    cursor: cursor(),
  }),
  output: z.object({ contacts: z.array(ContactSummary), next_cursor: nextCursor() }),
  annotations: READ,
  run: ({ s, principal }, args) => listContacts(s, principal, args),
});

export const getContactTool = defineTool({
  name: 'svc_get_contact',
  title: 'Get a contact',
  description:
    'Returns every field of one contact, with the five orders it placed most recently. Use it after finding the contact with svc_list_contacts or svc_search.',
  scope: 'read',
  input: z.object({ contact_id: contactId }),
  output: z.object({
    contact: Contact,
    recent_orders: z.array(RecentOrder).describe('The five most recent orders, newest first'),
  }),
  annotations: READ,
  run: ({ s, principal }, args) => getContact(s, principal, args.contact_id),
});

export const createContactTool = defineTool({
  name: 'svc_create_contact',
  title: 'Create a contact',
  description:
    'Creates a contact in the organization. Give at least a name, email, phone or company; an email already used by another contact is refused with that contact’s id (error duplicate). Returns the new contact.',
  scope: 'write',
  input: z
    .object(
      Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])) as {
        [K in keyof typeof fields]: z.ZodOptional<(typeof fields)[K]>;
      },
    )
    .refine((c) => c.first_name || c.last_name || c.email || c.phone || c.company, {
      message: 'Give at least one of first_name, last_name, email, phone or company',
    }),
  output: z.object({ contact: Contact }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  run: async ({ s, principal }, args) => ({ contact: await createContact(s, principal, args) }),
});

export const updateContactTool = defineTool({
  name: 'svc_update_contact',
  title: 'Update a contact',
  description:
    'Changes fields of one contact; fields you leave out stay as they are, and null clears a field. Tags can be replaced (tags) or edited (add_tags, remove_tags). Returns the updated contact.',
  scope: 'write',
  input: z.object({
    contact_id: contactId,
    ...Object.fromEntries(
      Object.entries(fields)
        .filter(([k]) => k !== 'tags')
        .map(([k, v]) => [k, v.nullable().optional().describe(`${v.description}; null clears it`)]),
    ),
    tags: fields.tags.optional().describe('Replaces all tags'),
    add_tags: fields.tags.optional().describe('Tags to add'),
    remove_tags: fields.tags.optional().describe('Tags to remove'),
  } as { contact_id: typeof contactId } & {
    [K in Exclude<keyof typeof fields, 'tags'>]: z.ZodOptional<z.ZodNullable<(typeof fields)[K]>>;
  } & {
    tags: z.ZodOptional<typeof fields.tags>;
    add_tags: z.ZodOptional<typeof fields.tags>;
    remove_tags: z.ZodOptional<typeof fields.tags>;
  }),
  output: z.object({ contact: Contact }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  run: async ({ s, principal }, { contact_id, ...changes }) => ({
    contact: await updateContact(s, principal, contact_id, changes),
  }),
});
