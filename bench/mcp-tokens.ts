// What the MCP server's tools/list costs a model on every turn: the total and each tool's
// tokens (o200k_base), beside the budget of 190 a tool (at most 400 for any one), for an agent
// with every scope and for a read-only one. The list is the one the server answers with
// (src/mcp/server.ts toolsFor). Prints; never fails.

import { toolsFor } from '../src/mcp/server.ts';
import type { Principal } from '../src/platform/db/database.ts';
import { BUDGET, toolListTokens } from './tool-tokens.ts';

const agent = (scopes: string[]): Extract<Principal, { kind: 'agent' }> => ({
  kind: 'agent',
  keyId: '00000000-0000-0000-0000-000000000000',
  claims: { agent_scopes: scopes },
});

for (const [who, scopes] of [
  ['every scope (admin)', ['read', 'write', 'admin']],
  ['read-only', ['read']],
] as const) {
  const tools = toolsFor(agent([...scopes]));
  const { total, perTool } = toolListTokens(tools);
  console.log(`\ntools/list for an agent with ${who}: ${tools.length} tools`);
  for (const t of perTool) {
    // 190 is an average: one tool may spend more if others spend less, up to the ceiling.
    const flag = t.tokens > BUDGET.maxTool ? `  over the ${BUDGET.maxTool} ceiling` : '';
    console.log(`  ${t.name.padEnd(26)} ${String(t.tokens).padStart(5)}${flag}`);
  }
  const max = Math.max(...perTool.map((t) => t.tokens));
  console.log(
    `  total ${total} tokens, ${(total / tools.length).toFixed(0)} a tool (budget ${BUDGET.perTool}; ` +
      `${tools.length} × ${BUDGET.perTool} = ${tools.length * BUDGET.perTool}), largest ${max} (ceiling ${BUDGET.maxTool}); ` +
      `${JSON.stringify({ tools }).length} bytes`,
  );
}
