import { z } from '@hono/zod-openapi';

/** `page`/`per_page` query of every list function (spec 4.8). */
export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  per_page: z.coerce.number().int().min(1).max(100).default(25),
});

export type Page = z.infer<typeof PageQuery>;

export const pageWindow = (p: Page) => ({ limit: p.per_page, offset: (p.page - 1) * p.per_page });

export function listEnvelope<T>(data: T[], p: Page, total: number) {
  return {
    data,
    pagination: { page: p.page, per_page: p.per_page, total, total_pages: Math.ceil(total / p.per_page) },
  };
}

export const listSchema = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    pagination: z.object({
      page: z.number().int(),
      per_page: z.number().int(),
      total: z.number().int(),
      total_pages: z.number().int(),
    }),
  });
