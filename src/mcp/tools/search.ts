import { z } from 'zod';
import { SEARCH_TYPES, search } from '../../domain/search.ts';
import { defineTool } from '../tool.ts';
import { READ } from './common.ts';

export const searchTool = defineTool({
  name: 'svc_search',
  title: 'Search everything',
  description:
    'Find contacts, orders and inventory at once from a fragment ("Ana", "ORD-12", "+44 20", "TSHIRT-") when the kind of record is unknown. Returns hits {type, id, title, subtitle, score}, best first.',
  scope: 'read',
  input: z.strictObject({
    query: z.string().trim().min(2).max(200),
    types: z.array(z.enum(SEARCH_TYPES)).min(1).max(3).optional(),
    limit: z.number().int().min(1).max(50).default(10),
  }),
  output: z.object({
    query: z.string(),
    hits: z.array(
      z.object({
        type: z.enum(SEARCH_TYPES),
        id: z.guid(),
        title: z.string(),
        subtitle: z.string().nullable(),
        score: z.number().describe('Higher is better: 100 exact, 70 prefix, 55 word prefix, 30 anywhere'),
      }),
    ),
  }),
  annotations: READ,
  run: ({ s, principal }, args) => search(s, principal, args),
});
