import type { Logger } from '../platform/log.ts';

// What an MCP POST is to the code that answers it (answer.ts), whichever server received it
// (route.ts or http.ts), and the answer it gives.

/** What answering a POST needs of the request, whichever server received it (here, or http.ts). */
export type McpPost = {
  /** The endpoint's path the request came to (origin.ts: MCP_PATH or MCP_ALIAS). */
  path: string;
  authorization: string | undefined;
  /** The body as text (asked once). */
  text(): Promise<string>;
  /** The request as the SDK's transport reads it: method, URL and headers (the body is `text`). */
  request: Request;
  /** The same with `text` as its body, for the transport to read and refuse. */
  withBody(text: string): Request;
  log: Logger;
  /**
   * Set by answerPost once the body is read: what the request called, for its duration metric
   * (the tool's name, or the JSON-RPC method; `other` outside the known ones, `batch` for several).
   */
  target?: string;
};

/** An answer written as text (a tool call answered directly), which no Response need carry. */
export type TextAnswer = { status: number; headers: Record<string, string>; body: string };

/** A Response's body is a stream or null, never a string. */
export const isText = (a: Response | TextAnswer): a is TextAnswer => typeof a.body === 'string';
