// How many tokens a tools/list costs a model: each tool as its JSON in the list, counted with
// o200k_base (the GPT-4o family's encoding; other vendors' tokenizers land within a few percent).
// Shared by bench/mcp-tokens.ts and test/mcp/tool-budget.test.ts, so both count the same way.
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

/** Issue 10: the spec's 21 tools in at most 4,000 tokens, so 190 a tool on average, none above 400. */
export const BUDGET = { perTool: 190, maxTool: 400, tools: 21 };

const encoder = new Tiktoken(o200k);
export const countTokens = (text: string) => encoder.encode(text).length;

/** The whole answer (`{"tools": […]}`) and each tool, by name. */
export function toolListTokens(tools: readonly { name: string }[]) {
  return {
    total: countTokens(JSON.stringify({ tools })),
    perTool: tools.map((t) => ({ name: t.name, tokens: countTokens(JSON.stringify(t)) })),
  };
}
