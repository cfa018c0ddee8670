import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { redactMessages } from '../../src/llm/redact-messages.js';
import { redact, secretNeedles } from '../../src/text/redact.js';

// The walk the model client applies to every request's messages (src/llm/client.ts).

const SECRET = 'ghp_0123456789abcdefSECRET';

describe('redactMessages', () => {
  it('rewrites every text a message carries and none of the fields naming its structure', () => {
    // A secret equal to a role and to a part's type: the request keeps its shape all the same.
    const r = (t: string) => redact(t, secretNeedles([SECRET, 'user', 'text']));
    const bytes = new Uint8Array([1, 2, 3]);
    const messages: ModelMessage[] = [
      { role: 'user', content: `the key is ${SECRET}, says the user` },
      {
        role: 'user',
        content: [
          { type: 'text', text: `AGENTS.md:\n${SECRET}` },
          { type: 'file', data: bytes, mediaType: 'text/plain', filename: `${SECRET}.txt` },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: `think ${SECRET}` },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { command: `echo ${SECRET}`, type: SECRET } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'bash', output: { type: 'text', value: `out ${SECRET}` } },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'editor',
            output: { type: 'json', value: { lines: [SECRET], nested: { type: SECRET } } },
          },
        ],
      },
    ];
    const before = JSON.stringify(messages);
    const sent = redactMessages(messages, r);
    expect(JSON.stringify(messages), 'the caller’s messages are left as they were').toBe(before);
    expect(JSON.stringify(sent)).not.toContain(SECRET);
    expect(sent).toEqual([
      { role: 'user', content: 'the key is [redacted], says the [redacted]' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'AGENTS.md:\n[redacted]' },
          { type: 'file', data: bytes, mediaType: 'text/plain', filename: '[redacted].txt' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'think [redacted]' },
          {
            type: 'tool-call',
            toolCallId: 'c1',
            toolName: 'bash',
            input: { command: 'echo [redacted]', type: '[redacted]' },
          },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'bash',
            output: { type: 'text', value: 'out [redacted]' },
          },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'editor',
            output: { type: 'json', value: { lines: ['[redacted]'], nested: { type: '[redacted]' } } },
          },
        ],
      },
    ]);
  });

  it('looks for no value shorter than 4 characters, and replaces a secret holding another whole', () => {
    const needles = secretNeedles(['abc', 'tok_1234', 'tok_1234_and_more', 'tok_1234']);
    expect(needles).toEqual(['tok_1234_and_more', 'tok_1234']);
    expect(redact('abc tok_1234_and_more tok_1234', needles)).toBe('abc [redacted] [redacted]');
  });
});
