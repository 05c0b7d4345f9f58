// What tools/list tells a model on every turn: few tokens, schemas any vendor's tool format
// accepts, and only the tools the agent may call. Counted as bench/mcp-tokens counts them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUDGET, toolListTokens } from '../../bench/tool-tokens.ts';
import { type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let starter: Session;
/** A free organization of its own: the free plan allows one agent key. */
const freeOrg = () => signUp(svc, 'Free Ltd');

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '1000' });
  starter = await signUp(svc, 'Budget Ltd');
  await setPlan(svc, starter, 'starter');
});
afterAll(() => svc?.stop());

const served = async (session: Session, scopes: string[]) => {
  const client = await mcpClient(svc, (await agentToken(svc, session, scopes)).token);
  try {
    return { ...(await client.listTools()), instructions: client.getInstructions() ?? '' };
  } finally {
    await client.close();
  }
};

const WRITE_TOOLS = [
  'svc_create_contact',
  'svc_update_contact',
  'svc_create_order',
  'svc_update_order_status',
  'svc_send_message',
  'svc_create_social_post',
  'svc_update_social_post',
  'svc_delete_social_post',
];

describe('tools/list', () => {
  it('fits the token budget: 190 a tool on average, none above 400', async () => {
    const { tools } = await served(starter, ['write']);
    expect(tools).toHaveLength(21);
    const { total, perTool } = toolListTokens(tools);
    expect(total).toBeLessThanOrEqual(tools.length * BUDGET.perTool);
    for (const t of perTool) expect(t.tokens, t.name).toBeLessThanOrEqual(BUDGET.maxTool);
  });

  it('uses schemas every model vendor accepts: one type per node, formats without regexes', async () => {
    const { tools } = await served(starter, ['write']);
    const problems: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) {
        for (const [i, n] of node.entries()) walk(n, `${at}[${i}]`);
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      const n = node as Record<string, unknown>;
      if (Array.isArray(n.type)) problems.push(`${at}: type ${JSON.stringify(n.type)}`);
      if (n.type === 'null') problems.push(`${at}: type null`);
      const extra = n.additionalProperties;
      if (typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0)
        problems.push(`${at}: empty additionalProperties`);
      if (n.format && n.pattern) problems.push(`${at}: a pattern beside format ${n.format}`);
      if (n.$schema) problems.push(`${at}: $schema`);
      for (const [k, v] of Object.entries(n)) walk(v, `${at}.${k}`);
    };
    for (const t of tools) {
      walk(t.inputSchema, t.name);
      // A model that misspells an argument is told so (see strict-endpoint.test.ts).
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, t.name).toBe(false);
    }
    expect(problems).toEqual([]);
    const listOrders = tools.find((t) => t.name === 'svc_list_orders');
    expect(listOrders?.inputSchema.properties?.created_after).toMatchObject({ format: 'date-time' });
    const create = tools.find((t) => t.name === 'svc_create_contact');
    expect(create?.inputSchema.properties?.email).toEqual({ type: 'string', format: 'email' });
  });

  it('shows a read-only agent no write tools, and tells it which scope and plan bring them', async () => {
    const reader = await served(await freeOrg(), ['read']);
    const names = reader.tools.map((t) => t.name);
    expect(names).toEqual([
      'svc_list_contacts',
      'svc_get_contact',
      'svc_list_orders',
      'svc_get_order',
      'svc_list_inventory',
      'svc_check_stock',
      'svc_list_conversations',
      'svc_search',
      'svc_list_social_posts',
      'svc_get_social_post',
      'svc_list_social_accounts',
      'svc_get_social_analytics',
      'svc_get_content_calendar',
    ]);
    for (const t of reader.tools) expect(t.annotations?.readOnlyHint, t.name).toBe(true);
    // A key asking for write on the free plan is granted read only: its list is the same.
    expect((await served(await freeOrg(), ['write'])).tools.map((t) => t.name)).toEqual(names);
    const writer = await served(starter, ['write']);
    expect(writer.tools.map((t) => t.name)).toEqual(expect.arrayContaining(WRITE_TOOLS));

    // The instructions name, for each scope, the cheapest plan that grants it (the plans table).
    const plans = await svc.services.db.query<{ slug: string; mcp_scopes: string[] }>(
      'select slug, mcp_scopes from plans order by rank',
    );
    for (const scope of ['write', 'admin']) {
      const cheapest = plans.find((p) => p.mcp_scopes.includes(scope))?.slug;
      expect(reader.instructions).toMatch(new RegExp(`${scope}[^.]*${cheapest}`));
    }
  });

  it('still answers a hidden tool with insufficient_scope, which the SDK client hands back', async () => {
    const client = await mcpClient(svc, (await agentToken(svc, await freeOrg(), ['read'])).token);
    try {
      const r = await tool(client, 'svc_create_contact', { first_name: 'Nope' });
      expect(r).toMatchObject({ isError: true, body: { error: 'insufficient_scope' } });
      // An isError result, with structuredContent that is no tool result, does not make it throw.
      const missing = await client.callTool({
        name: 'svc_get_contact',
        arguments: { contact_id: '00000000-0000-4000-8000-000000000000' },
      });
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toMatchObject({ error: 'not_found', message: expect.any(String) });
    } finally {
      await client.close();
    }
  });
});
