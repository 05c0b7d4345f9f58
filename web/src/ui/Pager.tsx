/** Previous/next over a list whose total is known (Content-Range) or unknown (cursor lists). */
export function Pager({
  page,
  pageSize,
  total,
  hasMore,
  onPage,
}: {
  page: number;
  pageSize: number;
  total?: number | null;
  hasMore?: boolean;
  onPage(page: number): void;
}) {
  const last = total != null ? Math.max(0, Math.ceil(total / pageSize) - 1) : undefined;
  const more = hasMore ?? (last !== undefined && page < last);
  if (page === 0 && !more) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page + 1}
        {last !== undefined && ` of ${last + 1}`}
      </span>
      <button type="button" disabled={!more} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
