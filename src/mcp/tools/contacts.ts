import { z } from 'zod';
import { createContact, getContact, listContacts, updateContact } from '../../domain/contacts.ts';
import { CLEARABLE, ContactChanges, NewContact } from '../../domain/inputs.ts';
import { Contact, ContactSummary, RecentOrder } from '../../domain/records.ts';
import { defineTool } from '../tool.ts';
import { CREATE, cursor, limit, nextCursor, READ, UPDATE } from './common.ts';

// The fields and their limits are the domain's (src/domain/inputs.ts); these tools describe them.

const contactId = z.guid();

export const listContactsTool = defineTool({
  name: 'svc_list_contacts',
  title: 'List contacts',
  description:
    'Browse contacts newest first, or find one by part of name/company, email, phone digits or tag. Returns {contacts, next_cursor}.',
  scope: 'read',
  input: z.strictObject({
    name: z.string().max(200).optional(),
    email: z.string().max(320).optional(),
    phone: z.string().max(40).optional(),
    tag: z.string().max(100).optional(),
    limit: limit(),
    cursor: cursor(),
  }),
  output: z.object({ contacts: z.array(ContactSummary), next_cursor: nextCursor() }),
  records: 'contacts',
  annotations: READ,
  run: ({ s, principal }, args) => listContacts(s, principal, args),
});

export const getContactTool = defineTool({
  name: 'svc_get_contact',
  title: 'Get a contact',
  description: 'Every field of one contact and its five latest orders. Returns {contact, recent_orders}.',
  scope: 'read',
  input: z.strictObject({ contact_id: contactId }),
  output: z.object({ contact: Contact, recent_orders: z.array(RecentOrder) }),
  records: 'contacts',
  annotations: READ,
  run: ({ s, principal }, args) => getContact(s, principal, args.contact_id),
});

export const createContactTool = defineTool({
  name: 'svc_create_contact',
  title: 'Create a contact',
  description:
    'Add a customer or lead. Give at least a name, email, phone or company; an email already in use is refused with that contact’s id. Returns {contact}.',
  scope: 'write',
  input: NewContact,
  output: z.object({ contact: Contact }),
  records: 'contacts',
  annotations: CREATE,
  run: async ({ s, principal }, args) => ({ contact: await createContact(s, principal, args, 'mcp') }),
});

export const updateContactTool = defineTool({
  name: 'svc_update_contact',
  title: 'Update a contact',
  description:
    'Change fields of one contact; fields left out stay, clear lists fields to empty. tags replaces all tags, add_tags/remove_tags edit them. Returns {contact}.',
  scope: 'write',
  input: z
    .strictObject({
      contact_id: contactId,
      // null also clears, as before `clear` existed; tools/list offers only the plain type.
      ...ContactChanges.shape,
      clear: z.array(z.enum(CLEARABLE)).max(CLEARABLE.length).optional(),
    })
    .refine((a) => !a.clear?.some((k) => a[k] != null), {
      path: ['clear'],
      message: 'A field is both given a value and cleared: do one or the other',
    }),
  output: z.object({ contact: Contact }),
  records: 'contacts',
  annotations: UPDATE,
  run: async ({ s, principal }, { contact_id, clear, ...changes }) => ({
    contact: await updateContact(s, principal, contact_id, {
      ...changes,
      ...Object.fromEntries((clear ?? []).map((k) => [k, null])),
    }),
  }),
});
