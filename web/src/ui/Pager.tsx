/**
 * Previous/next over a list whose total is known (Content-Range) or unknown (cursor lists). With
 * `about`, the total is the planner's estimate (`count=estimated` past its exact range) and says so.
 */
export function Pager({
  page,
  pageSize,
  total,
  about = false,
  hasMore,
  onPage,
}: {
  page: number;
  pageSize: number;
  total?: number | null;
  about?: boolean;
  hasMore?: boolean;
  onPage(page: number): void;
}) {
  const last = total != null ? Math.max(0, Math.ceil(total / pageSize) - 1) : undefined;
  const more = hasMore ?? (last !== undefined && page < last);
  if (page === 0 && !more) return null;
  // An estimate may fall short of where the cursor already is.
  const pages = last !== undefined ? Math.max(last + 1, page + (more ? 2 : 1)) : undefined;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {(page + 1).toLocaleString()}
        {pages !== undefined && ` of ${about ? 'about ' : ''}${pages.toLocaleString()}`}
      </span>
      <button type="button" disabled={!more} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
