import { z } from 'zod';
import { SEARCH_TYPES, search } from '../../domain/search.ts';
import { defineTool } from '../tool.ts';
import { READ } from './common.ts';

export const searchTool = defineTool({
  name: 'svc_search',
  title: 'Search everything',
  description:
    'Searches contacts, orders and inventory at once by name, email, phone, order number or SKU, best matches first. Use it when you have a fragment ("Ana", "ORD-12", "+44 20", "TSHIRT-") and do not know what kind of record it is. Returns hits with their type and id for the matching get tool.',
  scope: 'read',
  input: z.object({
    query: z.string().trim().min(2).max(200).describe('What to look for (at least 2 characters)'),
    types: z.array(z.enum(SEARCH_TYPES)).min(1).max(3).optional().describe('Limit to these kinds of record'),
    limit: z.number().int().min(1).max(50).default(10).describe('How many hits (default 10, at most 50)'),
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
