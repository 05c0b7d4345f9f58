import type { CallToolResult, Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { requireScope, tokenCovers } from '../domain/agent-keys.ts';
import type { Principal } from '../platform/db/database.ts';
import { type AppError, errorBody, toAppError, validationError } from '../platform/errors.ts';
import { type Logger, logFailure } from '../platform/log.ts';
import type { Services } from '../services.ts';
import { unavailable } from './rpc-errors.ts';

/**
 * What a tool call runs with: the services, the agent it acts for and the request's log.
 * `unavailable` is set when a call or read could not reach the database: the request is then
 * answered 503 (route.ts).
 */
export type ToolContext = {
  s: Services;
  principal: Extract<Principal, { kind: 'agent' }>;
  log: Logger;
  unavailable?: AppError;
};

/** MCP's hints; those left out take the specification's defaults (read-only tools need only one). */
type Annotations = { readOnlyHint: true } | { destructiveHint: boolean; idempotentHint: boolean };

export type Tool = {
  name: string;
  title: string;
  /** Written for a language model: what it is for, when to use it, what it returns. */
  description: string;
  /** `read` tools only look; `write` tools create or change records. */
  scope: 'read' | 'write';
  /** A strict object: an argument the tool does not take is refused, not ignored. */
  input: z.ZodObject;
  /** What a result holds; published in the `svc://schema/<records>` resource, not in tools/list. */
  output: z.ZodObject;
  records?: 'contacts' | 'orders' | 'inventory';
  annotations: Annotations;
  /** Runs before the scope check: a refusal that explains better (a plan without the feature). */
  precheck?(ctx: ToolContext): Promise<void>;
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
  records?: Tool['records'];
  annotations: Annotations;
  precheck?: Tool['precheck'];
  run: (ctx: ToolContext, args: z.output<I>) => Promise<z.input<O>>;
}): Tool {
  return t as unknown as Tool;
}

/** Schemas whose JSON Schema for a model is written by hand (`offered`), not derived by zod. */
const OFFERED = z.registry<{ json: Record<string, unknown> }>();

/**
 * Tells a model `json` for `schema` while the server still validates with `schema`: e.g. a
 * date-or-time filter offered as one `date-time` string instead of zod's two regexes, or a field
 * that also takes a lone value for backward compatibility offered as its array form.
 */
export function offered<T extends z.ZodType>(schema: T, json: Record<string, unknown>): T {
  OFFERED.add(schema, { json });
  return schema;
}

// Caps against abuse a model never comes near (and "not empty"): the server enforces them all the same.
const UNTOLD = new Set(['$schema', 'propertyNames', 'maxLength', 'maxItems']);

/**
 * The JSON Schema a model reads, in the form every vendor's tool format takes: `format` without
 * zod's long regex (the server still checks the value), one `type` per node (a nullable input is
 * offered as its type; a tool that empties fields says how), and no empty `additionalProperties`.
 */
function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (typeof node !== 'object' || node === null) return node;
  const n = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) {
    if (UNTOLD.has(k) || (k === 'pattern' && n.format) || (k === 'minLength' && v === 1)) continue;
    if (k === 'additionalProperties' && typeof v === 'object' && v && !Object.keys(v).length) continue;
    if (k === 'properties' && typeof v === 'object' && v) {
      // Field names, not keywords: a field may well be called "type" or "format".
      out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, portable(s)]));
    } else if (k === 'type' && Array.isArray(v)) out.type = v.filter((t) => t !== 'null')[0];
    else if (k === 'anyOf' && Array.isArray(v)) {
      const options = v.filter((o) => (o as { type?: unknown }).type !== 'null');
      if (options.length === 1) Object.assign(out, portable(options[0]));
      else out.anyOf = portable(options);
    } else out[k] = portable(v);
  }
  return out;
}

const inputSchema = (schema: z.ZodType) =>
  portable(
    z.toJSONSchema(schema, {
      target: 'draft-7',
      io: 'input',
      unrepresentable: 'any',
      override: (ctx) => {
        const json = OFFERED.get(ctx.zodSchema)?.json;
        if (!json) return;
        for (const k of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[k];
        Object.assign(ctx.jsonSchema, json);
      },
    }),
  ) as ListedTool['inputSchema'];

/**
 * tools/list entries, computed once. No outputSchema: result shapes are in the svc://schema/*
 * resources (docs/decisions.md, "MCP server"), which keeps the list within a model's budget and
 * the SDK client (1.32) from checking an isError result against a result schema (typescript-sdk
 * issue #1943). Results still carry structuredContent.
 */
export function listing(tools: Tool[]): (ListedTool & { scope: Tool['scope'] })[] {
  return tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: inputSchema(t.input),
    annotations: { ...t.annotations, openWorldHint: false },
    scope: t.scope,
  }));
}

/** Whether the agent's token lets it call `tool`: the same check the call itself makes. */
export const mayCall = (principal: ToolContext['principal'], tool: Pick<Tool, 'scope'>) =>
  tokenCovers(principal, tool.scope);

const result = (value: Record<string, unknown>, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value,
  ...(isError ? { isError: true } : {}),
});

/** Every problem with the arguments at once; an unknown argument is named with the ones it may be. */
function invalidArguments(tool: Tool, issues: z.core.$ZodIssue[]) {
  const known = Object.keys(tool.input.shape);
  return validationError(
    issues.flatMap((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((k) => ({
            path: [...i.path, k].map(String).join('.'),
            message: `Unknown argument; ${tool.name} takes ${known.join(', ') || 'none'}`,
          }))
        : [{ path: i.path.map(String).join('.'), message: i.message }],
    ),
    `Invalid arguments for ${tool.name}: correct those in details.issues and call again`,
  );
}

/** A tool's answer before it becomes MCP's result: the value, and whether it is a refusal. */
export type ToolAnswer = { value: Record<string, unknown>; isError: boolean };

/**
 * One tools/call. Every refusal and failure is a result with isError and the error body, so a
 * model can read it and correct itself; only an unknown tool is a protocol fault (the caller's).
 */
export async function runTool(tool: Tool, ctx: ToolContext, args: unknown): Promise<ToolAnswer> {
  try {
    await tool.precheck?.(ctx);
    await requireScope(ctx.s, ctx.principal, tool.scope, tool.name);
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) throw invalidArguments(tool, parsed.error.issues);
    return { value: await tool.run(ctx, parsed.data), isError: false };
  } catch (err) {
    const e = toAppError(err);
    // Answered as a tool result (HTTP 200), so the app's error handler never sees it: logged here.
    if (e.status >= 500) logFailure(ctx.log, err, { tool: tool.name }, 'tool failed');
    // Not a mistake the model can correct: a JSON-RPC error that clients retry on.
    if (e.code === 'service_unavailable') throw unavailable(ctx, e);
    return { value: errorBody(e), isError: true };
  }
}

/** runTool's answer as the SDK's server sends it. */
export async function callTool(tool: Tool, ctx: ToolContext, args: unknown): Promise<CallToolResult> {
  const { value, isError } = await runTool(tool, ctx, args);
  return result(value, isError);
}
