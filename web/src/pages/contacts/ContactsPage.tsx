import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { Link } from 'react-router';
import { date, personName } from '../../lib/format';
import { useInsertAndOpen } from '../../lib/insert-and-open';
import { useKeysetList } from '../../lib/keyset-list';
import { type SortColumn, useListSort } from '../../lib/list-sort';
import { useUrlFilters } from '../../lib/url-filters';
import { ExportCsv, exportQuery } from '../../ui/ExportCsv';
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

/**
 * The orders a person can ask for by a header (docs/decisions.md, "Sorting the contacts and orders
 * tables"): each has an index on (organization_id, column, id). The name sorts by first name, as
 * it reads; the phone and tags do not sort (a phone sorts by country code, tags are a list).
 */
const SORTS: Record<string, SortColumn> = {
  first_name: { header: 'name', kind: 'text', nullable: true, first: 'asc' },
  email: { header: 'email', kind: 'text', nullable: true, first: 'asc' },
  created_at: { header: 'created_at', kind: 'time', nullable: false, first: 'desc' },
};

/** What the export file holds: the contact as a person reads it, without internal ids. */
const EXPORT_COLUMNS = 'first_name,last_name,email,phone,company,job_title,tags,notes,source,created_at';

// PostgREST's or=() takes a comma-separated list: characters that would break it are dropped.
const searchable = (s: string) => s.replace(/[,()*\\]/g, ' ').trim();

export function ContactsPage() {
  const filters = useUrlFilters();
  const search = filters.get('q');
  const tag = filters.get('tag');
  const [adding, setAdding] = useState(false);

  const { sort, kind, sorting } = useListSort(filters, SORTS);
  // The list's filters, for its pages and for its export alike.
  const filter = <Q extends { or(f: string): Q; contains(c: string, v: string[]): Q }>(q: Q): Q => {
    const term = searchable(search);
    if (term) {
      q = q.or(
        ['first_name', 'last_name', 'email', 'phone', 'company'].map((c) => `${c}.ilike.*${term}*`).join(','),
      );
    }
    return tag ? q.contains('tags', [tag]) : q;
  };

  const list = useKeysetList<Contact>({
    key: ['contacts', { search, tag }],
    table: 'contacts',
    select: CONTACT_COLUMNS,
    pageSize: PAGE_SIZE,
    filter,
    sort,
    kind,
    position: filters.position,
    go: filters.go,
  });
  const query = () => exportQuery('contacts', EXPORT_COLUMNS, filter, sort);
  const create = useInsertAndOpen('contacts', toRow, 'contacts', '/app/contacts');
  const { set } = filters;

  return (
    <Page
      title="Contacts"
      actions={
        <>
          <ExportCsv table="contacts" query={query} />
          <button type="button" className="primary" aria-expanded={adding} onClick={() => setAdding(!adding)}>
            New contact
          </button>
        </>
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
      <PagedTable
        {...list}
        columns={columns}
        caption="Contacts"
        empty="No contacts match"
        sorting={sorting}
      />
    </Page>
  );
}
