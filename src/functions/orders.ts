import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../domain/agent-keys.ts';
import { NewOrder } from '../domain/inputs.ts';
import { createOrder } from '../domain/order-create.ts';
import { OrderWithItems } from '../domain/records.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';

// POST /functions/v1/orders: svc_create_order for people (the dashboard) and any HTTP client.
// /rest/v1 inserts rows as they are; creating an order the spec's way (2.3: lines matched to
// inventory by name, then SKU, else a new draft item; the customer linked to a contact) is a
// domain workflow, and the MCP server that offers it takes agent JWTs only. Same domain function,
// same input schema, same answer as the tool.

const Warning = z.object({ code: z.string(), message: z.string(), line: z.number().int().optional() });

const create = createRoute({
  method: 'post',
  path: '/orders',
  summary: 'Create an order: lines linked to inventory (item_id, else name, then SKU, else a new draft item)',
  description:
    'The input of svc_create_order (spec 2.3). The service numbers the order and computes its totals; ' +
    'linking never blocks the order: what could not be linked is listed in warnings.',
  request: jsonBody(NewOrder),
  responses: {
    201: jsonResponse(
      z.object({ order_number: z.string(), order: OrderWithItems, warnings: z.array(Warning) }),
      'Created',
    ),
    ...errorResponses(400, 401, 403, 404),
  },
});

export function orders(s: Services) {
  return newRouter().openapi(create, async (c) => {
    const principal = c.get('principal');
    await requireScope(s, principal, 'write', 'Creating orders');
    return c.json(await createOrder(s, principal, c.req.valid('json'), 'function'), 201);
  });
}
