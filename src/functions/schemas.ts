import { z } from '@hono/zod-openapi';

export const OrganizationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    plan: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Organization');

export const MemberSchema = z
  .object({
    user_id: z.uuid(),
    email: z.string(),
    role: z.enum(['owner', 'admin', 'member']),
    created_at: z.string(),
  })
  .openapi('Member');

/** Dates leave as ISO 8601 strings with milliseconds. */
export const iso = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString();

export const orgJson = <T extends { created_at: Date; updated_at: Date }>(o: T) => ({
  ...o,
  created_at: iso(o.created_at),
  updated_at: iso(o.updated_at),
});
