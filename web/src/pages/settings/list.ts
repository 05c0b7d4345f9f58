/** The list envelope every list function answers with (spec 4.8); pages here count from 0. */
export type ListEnvelope<T> = {
  data: T[];
  pagination: { page: number; per_page: number; total: number; total_pages: number };
};

export const PAGE_SIZE = 20;

/** The functions' `page`/`per_page` query for a 0-based page of the dashboard's Pager. */
export const pageQuery = (page: number, size = PAGE_SIZE) => ({ page: page + 1, per_page: size });
