import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TOOLS } from '../../src/mcp/tools/index.ts';
import { call, orgOf, type Session } from './http.ts';
import type { TestService } from './service.ts';

export const mcpUrl = (svc: TestService) => `${svc.url}/functions/v1/mcp-server`;

/** A raw JSON-RPC POST, for what the SDK client cannot send (a body is JSON-encoded; a string is sent as is). */
export const rpcPost = (
  svc: TestService,
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
) =>
  fetch(mcpUrl(svc), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** The official SDK client, connected over real HTTP with `token` as its bearer. */
export async function mcpClient(svc: TestService, token: string): Promise<Client> {
  const client = new Client({ name: 'svc-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl(svc)), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** Moves the session's organization to `plan` the way an operator does. */
export async function setPlan(svc: TestService, session: Session, plan: string) {
  const r = await call(svc, 'POST', '/functions/v1/organization-plan', {
    token: svc.serviceRoleKey,
    body: { organization_id: orgOf(session), plan },
  });
  if (r.status !== 200) throw new Error(`plan change failed: ${r.status} ${JSON.stringify(r.json)}`);
}

/** A key with `scopes` in the session's organization, exchanged for an agent JWT. */
export async function agentToken(svc: TestService, session: Session, scopes: string[]) {
  const key = await call(svc, 'POST', '/functions/v1/agent-api-key-create', {
    token: session.access_token,
    body: { name: `agent ${scopes.join('+')}`, scopes },
  });
  if (key.status !== 201) throw new Error(`key creation failed: ${key.status} ${JSON.stringify(key.json)}`);
  const auth = await call(svc, 'POST', '/functions/v1/agent-auth', { body: { api_key: key.json.api_key } });
  return {
    token: auth.json.access_token as string,
    apiKey: key.json.api_key as string,
    keyPrefix: key.json.key_prefix as string,
  };
}

/**
 * A tool call's structured answer. tools/list carries no output schemas (docs/decisions.md), so a
 * result is checked here against the tool's own: the shape svc://schema/* publishes.
 */
export async function tool(client: Client, name: string, args: Record<string, unknown> = {}) {
  const r = await client.callTool({ name, arguments: args });
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the tool returned
  const structured = r.structuredContent as any;
  const text = (r.content as { type: string; text: string }[])[0]?.text;
  if (text !== undefined && JSON.stringify(JSON.parse(text)) !== JSON.stringify(structured)) {
    throw new Error('the text content and structuredContent differ');
  }
  const declared = TOOLS.find((t) => t.name === name);
  if (declared && r.isError !== true) declared.output.parse(structured);
  return { isError: r.isError === true, body: structured };
}
