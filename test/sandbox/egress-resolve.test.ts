import type { LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { resolveAll } from '../../src/sandbox/egress-resolve.js';

// The setup policy's name resolution (src/sandbox/egress-resolve.ts), with a resolver that
// answers as it is told: no DNS is asked.
describe('the setup policy’s name resolution', () => {
  /** A resolver failing with the given codes in turn, then answering one address. */
  function scripted(codes: string[]): { lookup: LookupFunction; calls: () => number } {
    let calls = 0;
    const lookup = ((_host: string, _options: unknown, callback: (...args: unknown[]) => void) => {
      const code = codes[calls++];
      if (code) callback(Object.assign(new Error(`getaddrinfo ${code} registry.example`), { code }));
      else callback(null, [{ address: '203.0.113.7', family: 4 }]);
    }) as unknown as LookupFunction;
    return { lookup, calls: () => calls };
  }

  it('asks again after a temporary failure (EAI_AGAIN), as a loaded resolver gives, and answers what it then says', async () => {
    const resolver = scripted(['EAI_AGAIN', 'EAI_AGAIN']);
    await expect(resolveAll(resolver.lookup, 'registry.example', [1, 1])).resolves.toEqual([
      { address: '203.0.113.7', family: 4 },
    ]);
    expect(resolver.calls()).toBe(3);
  });

  it('gives up after its retries, and at once on a name that does not exist', async () => {
    const again = scripted(['EAI_AGAIN', 'EAI_AGAIN', 'EAI_AGAIN']);
    await expect(resolveAll(again.lookup, 'registry.example', [1, 1])).rejects.toMatchObject({ code: 'EAI_AGAIN' });
    expect(again.calls()).toBe(3);
    const missing = scripted(['ENOTFOUND']);
    await expect(resolveAll(missing.lookup, 'nowhere.example', [1, 1])).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(missing.calls()).toBe(1);
  });
});
