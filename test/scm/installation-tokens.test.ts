import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { InstallationTokens, TOKEN_MARGIN_MS } from '../../src/scm/github/installation-tokens.js';

/** The installation tokens a process keeps (src/scm/github/installation-tokens.ts), by the injectable clock. */
describe('installation tokens kept until shortly before they expire', () => {
  const HOUR = 3_600_000;

  function minter(clock: { now(): Date }) {
    let n = 0;
    const mint = async () => ({ token: `ghs_${++n}`, expiresAt: new Date(clock.now().getTime() + HOUR) });
    return { mint, count: () => n };
  }

  it('hands out the kept token until the margin before its expiry, then mints a new one', async () => {
    const clock = manualClock();
    const tokens = new InstallationTokens(clock);
    const m = minter(clock);
    expect(await tokens.token('github/1/widget', m.mint)).toBe('ghs_1');
    clock.advance(HOUR - TOKEN_MARGIN_MS - 1_000);
    expect(await tokens.token('github/1/widget', m.mint)).toBe('ghs_1');
    clock.advance(2_000);
    expect(await tokens.token('github/1/widget', m.mint)).toBe('ghs_2');
    expect(m.count()).toBe(2);
  });

  it('one token per key; callers asking at once share one mint; a failed mint is not kept', async () => {
    const clock = manualClock();
    const tokens = new InstallationTokens(clock);
    const m = minter(clock);
    const [a, b] = await Promise.all([tokens.token('github/1/a', m.mint), tokens.token('github/1/a', m.mint)]);
    expect([a, b]).toEqual(['ghs_1', 'ghs_1']);
    expect(await tokens.token('github/1/b', m.mint)).toBe('ghs_2');
    await expect(tokens.token('github/2/c', () => Promise.reject(new Error('403 suspended')))).rejects.toThrow(
      'suspended',
    );
    expect(await tokens.token('github/2/c', m.mint)).toBe('ghs_3');
  });

  it('forgets an installation’s tokens (uninstalled, suspended, repositories changed)', async () => {
    const clock = manualClock();
    const tokens = new InstallationTokens(clock);
    const m = minter(clock);
    await tokens.token('github/1/a', m.mint);
    await tokens.token('github/10/a', m.mint);
    tokens.forget('github/1/');
    expect(await tokens.token('github/1/a', m.mint)).toBe('ghs_3');
    expect(await tokens.token('github/10/a', m.mint)).toBe('ghs_2');
  });

  it("asks the app's bot identity once per host, and asks again after a failed look", async () => {
    const tokens = new InstallationTokens(manualClock());
    let looks = 0;
    const look = async () => ({ name: 'emend[bot]', email: `${++looks}+emend[bot]@users.noreply.github.com` });
    await expect(tokens.identity('github', () => Promise.reject(new Error('unreachable')))).rejects.toThrow();
    const [a, b] = await Promise.all([tokens.identity('github', look), tokens.identity('github', look)]);
    expect(a).toEqual(b);
    expect(await tokens.identity('github', look)).toEqual(a);
    expect(looks).toBe(1);
  });
});
