import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading } from '../../ui/Page';
import { Pager } from '../../ui/Pager';
import { drafts, PLATFORM_LABEL } from './post';

const PAGE_SIZE = 10;

/** Drafts have no date, so they wait beside the calendar until someone schedules them. */
export function DraftsList() {
  const [page, setPage] = useState(0);
  const list = useQuery({
    queryKey: ['social', 'drafts', page],
    queryFn: () => drafts(page, PAGE_SIZE),
    placeholderData: keepPreviousData,
  });
  return (
    <aside className="panel drafts" aria-labelledby="drafts-heading">
      <h2 id="drafts-heading">Drafts</h2>
      <ErrorNote error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data?.data.length ? (
        <ul className="plain">
          {list.data.data.map((p) => (
            <li key={p.id}>
              <Link to={`/app/social/${p.id}`}>{p.message?.slice(0, 80) || p.link || 'Untitled draft'}</Link>{' '}
              <span className="badge">{PLATFORM_LABEL[p.platform] ?? p.platform}</span>
            </li>
          ))}
        </ul>
      ) : (
        !list.error && <p className="empty">No drafts.</p>
      )}
      <Pager page={page} pageSize={PAGE_SIZE} total={list.data?.pagination.total} onPage={setPage} />
    </aside>
  );
}
