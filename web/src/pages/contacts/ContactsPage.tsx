import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { Link } from 'react-router';
import { date, personName } from '../../lib/format';
import { useInsertAndOpen } from '../../lib/insert-and-open';
import { useKeysetList } from '../../lib/keyset-list';
import { useUrlFilters } from '../../lib/url-filters';
import { Page } from '../../ui/Page';
import { PagedTable } from '../../ui/PagedTable';
import { ContactForm } from './ContactForm';
import { CONTACT_COLUMNS, type Contact, toForm, toRow } from './contact';

const PAGE_SIZE = 25;
const col = createColumnHelper<Contact>();
const columns = [
  col.display({
    id: 'name',
    header: 'Name',
    cell: ({ row }) => <Link to={`/app/contacts/${row.original.id}`}>{personName(row.original)}</Link>,
  }),
  col.accessor('email', { header: 'Email', cell: (c) => c.getValue() ?? '—' }),
  col.accessor('phone', { header: 'Phone', cell: (c) => c.getValue() ?? '—' }),
  col.accessor('tags', { header: 'Tags', cell: (c) => c.getValue().join(', ') || '—' }),
  col.accessor('created_at', { header: 'Added', cell: (c) => date(c.getValue()) }),
];

// PostgREST's or=() takes a comma-separated list: characters that would break it are dropped.
const searchable = (s: string) => s.replace(/[,()*\\]/g, ' ').trim();

export function ContactsPage() {
  const filters = useUrlFilters();
  const search = filters.get('q');
  const tag = filters.get('tag');
  const [adding, setAdding] = useState(false);

  const list = useKeysetList<Contact>({
    key: ['contacts', { search, tag }],
    table: 'contacts',
    select: CONTACT_COLUMNS,
    pageSize: PAGE_SIZE,
    filter: (q) => {
      const term = searchable(search);
      if (term) {
        q = q.or(
          ['first_name', 'last_name', 'email', 'phone', 'company']
            .map((c) => `${c}.ilike.*${term}*`)
            .join(','),
        );
      }
      return tag ? q.contains('tags', [tag]) : q;
    },
    position: filters.position,
    go: filters.go,
  });
  const create = useInsertAndOpen('contacts', toRow, 'contacts', '/app/contacts');
  const { set } = filters;

  return (
    <Page
      title="Contacts"
      actions={
        <button type="button" className="primary" aria-expanded={adding} onClick={() => setAdding(!adding)}>
          New contact
        </button>
      }
    >
      {adding && (
        <section className="panel" aria-label="New contact">
          <ContactForm
            initial={toForm()}
            submitLabel="Add contact"
            pending={create.isPending}
            error={create.error}
            onSubmit={(f) => create.mutate(f)}
          />
        </section>
      )}
      <search className="filters">
        <label>
          Search
          <input type="search" defaultValue={search} onChange={(e) => set('q', e.target.value)} />
        </label>
        <label>
          Tag
          <input defaultValue={tag} onChange={(e) => set('tag', e.target.value.trim())} />
        </label>
      </search>
      <PagedTable {...list} columns={columns} caption="Contacts" empty="No contacts match" />
    </Page>
  );
}
