export type Contact = {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  tags: string[];
  notes: string | null;
  source: string;
  created_at: string;
};

export const CONTACT_COLUMNS =
  'id, first_name, last_name, email, phone, company, tags, notes, source, created_at';

/** What the form edits; empty strings become nulls so the database's checks see "not given". */
export type ContactInput = {
  first_name: string;
  last_name: string;
  email: string;
  phone: string;
  company: string;
  tags: string;
  notes: string;
};

export const toRow = (f: ContactInput) => ({
  first_name: f.first_name.trim() || null,
  last_name: f.last_name.trim() || null,
  email: f.email.trim() || null,
  phone: f.phone.trim() || null,
  company: f.company.trim() || null,
  notes: f.notes.trim() || null,
  tags: f.tags
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean),
});

export const toForm = (c?: Contact): ContactInput => ({
  first_name: c?.first_name ?? '',
  last_name: c?.last_name ?? '',
  email: c?.email ?? '',
  phone: c?.phone ?? '',
  company: c?.company ?? '',
  notes: c?.notes ?? '',
  tags: c?.tags.join(', ') ?? '',
});
