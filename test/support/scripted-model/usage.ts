import type { Content, ModelRequest, ReplyUsage, Usage } from './types.js';

/** The double's token estimate: a quarter of the characters, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The text a reply is billed for: its text, the JSON it returns, and each tool call's name and JSON arguments. */
export function billableText(content: Content): string {
  if (content.json) return JSON.stringify(content.json.value) ?? '';
  let out = content.text;
  for (const call of content.toolCalls) out += call.name + (JSON.stringify(call.args ?? {}) ?? '');
  return out;
}

export function usageFor(req: ModelRequest, content: Content, given: ReplyUsage | undefined): Usage {
  return {
    input: given?.input ?? estimateTokens(req.text),
    output: given?.output ?? estimateTokens(billableText(content)),
  };
}
