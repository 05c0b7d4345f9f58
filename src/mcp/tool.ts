import type { CallToolResult, Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { requireScope } from '../domain/agent-keys.ts';
import type { Principal } from '../platform/db/database.ts';
import { errorBody, fromZodIssues, toAppError } from '../platform/errors.ts';
import type { Services } from '../services.ts';

/** What a tool call runs with: the services and the agent it acts for. */
export type ToolContext = { s: Services; principal: Extract<Principal, { kind: 'agent' }> };

type Annotations = { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };

export type Tool = {
  name: string;
  title: string;
  /** Written for a language model: what it does, when to use it, what it returns. */
  description: string;
  /** `read` tools only look; `write` tools create or change records. */
  scope: 'read' | 'write';
  input: z.ZodObject;
  output: z.ZodObject;
  annotations: Annotations;
  run(ctx: ToolContext, args: unknown): Promise<Record<string, unknown>>;
};

/** Declares a tool; `run` receives its input already validated. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(t: {
  name: string;
  title: string;
  description: string;
  scope: 'read' | 'write';
  input: I;
  output: O;
  annotations: Annotations;
  run: (ctx: ToolContext, args: z.output<I>) => Promise<z.input<O>>;
}): Tool {
  return t as unknown as Tool;
}

const ErrorBody = z
  .object({
    error: z.string().describe('Machine code, e.g. not_found, insufficient_scope, validation_error'),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  })
  .describe('A refused call (isError: true)');

/** A uuid's `format` says all its long `pattern` does; tools/list repeats it for every id. */
function compact(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compact);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$schema' || (k === 'pattern' && (node as { format?: string }).format === 'uuid')) continue;
    out[k] = compact(v);
  }
  return out;
}

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  compact(z.toJSONSchema(schema, { target: 'draft-7', io })) as Record<string, unknown>;

/**
 * tools/list, computed once. The output schema admits the error body as well as the result:
 * the SDK's client (1.32) validates structuredContent against it even when isError is set
 * (typescript-sdk issue #1943), and a refused call carries the error body there (decisions.md).
 */
export function listing(tools: Tool[]): ListedTool[] {
  return tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: jsonSchema(t.input, 'input') as ListedTool['inputSchema'],
    outputSchema: {
      type: 'object',
      anyOf: [jsonSchema(t.output, 'output'), jsonSchema(ErrorBody, 'output')],
    } as ListedTool['outputSchema'],
    annotations: { title: t.title, ...t.annotations, openWorldHint: false },
  }));
}

const result = (value: Record<string, unknown>, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value,
  ...(isError ? { isError: true } : {}),
});

/**
 * One tools/call. Every refusal and failure is a result with isError and the error body, so a
 * model can read it and correct itself; only an unknown tool is a protocol fault (the caller's).
 */
export async function callTool(tool: Tool, ctx: ToolContext, args: unknown): Promise<CallToolResult> {
  try {
    await requireScope(ctx.s, ctx.principal, tool.scope, tool.name);
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) throw fromZodIssues(parsed.error.issues);
    return result(await tool.run(ctx, parsed.data));
  } catch (err) {
    const e = toAppError(err);
    if (e.status >= 500) {
      const { name, message, stack } = err as Error;
      ctx.s.log.error({ err: { name, message, stack }, tool: tool.name }, 'tool failed');
    }
    return result(errorBody(e), true);
  }
}
