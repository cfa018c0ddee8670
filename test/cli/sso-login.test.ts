import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from '../support/cookie-jar.js';
import { type TestOidcProvider, serveWithOidc } from '../support/oidc-provider.js';
import { killRemotes, newConfigHome, remoteEnv, removeConfigDirs, startRemote } from './remote-process.js';

/**
 * `emend login --sso` (issue 48 point 3): the command prints the address to open; the "browser"
 * (cookie jars following redirects) signs in at a real OpenID provider (oidc-provider on loopback)
 * and is sent back to the command's loopback port, which trades the code for a token and saves it.
 */
let served: Awaited<ReturnType<typeof serveWithOidc>>;
let idp: TestOidcProvider;
let base = '';

beforeAll(async () => {
  served = await serveWithOidc();
  ({ idp, base } = served);
}, 60_000);

afterAll(async () => {
  await killRemotes();
  await served?.close();
  removeConfigDirs();
});

async function waitFor(read: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = pattern.exec(read());
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${read()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The browser's walk from emend's login address through the provider, back to where emend sends it. */
async function walk(start: string): Promise<Response> {
  const emend = new CookieJar();
  const provider = new CookieJar();
  let res = await emend.fetch(start);
  let location = new URL(res.headers.get('location')!, start);
  while (location.origin !== base) {
    res = await provider.fetch(location);
    location = new URL(res.headers.get('location')!, location);
  }
  return emend.fetch(location);
}

describe('emend login --sso', { timeout: 120_000 }, () => {
  it('signs in through the provider in a browser and saves a working token; a code without the verifier is refused', async () => {
    idp.addUser('jo-sub', { email: 'jo@corp.example' });
    idp.as('jo-sub');
    const config = newConfigHome();
    const run = startRemote(['login', '--server', base, '--sso'], remoteEnv({ config }));
    const [, address] = await waitFor(run.errors, /Open this address in a browser to sign in:\n\s+(\S+)/);
    expect(address).toMatch(new RegExp(`^${base}/v1/auth/oidc/login\\?cli_port=\\d+&cli_challenge=`));

    const back = await walk(address!);
    expect(back.status).toBe(302);
    const toCommand = new URL(back.headers.get('location')!);
    expect(toCommand.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(back.headers.getSetCookie().some((c) => c.startsWith('emend_session='))).toBe(false);

    // Someone who saw the code (the browser's history) but holds no verifier gets nothing.
    const stolen = await fetch(`${base}/v1/auth/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: toCommand.searchParams.get('code'), verifier: 'x'.repeat(43) }),
    });
    expect(stolen.status).toBe(400);
    expect((await stolen.json()).message).toContain('verifier');

    const page = await fetch(toCommand);
    expect(await page.text()).toContain('you can close this tab');
    const exit = await run.exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toContain('as jo@corp.example');
    const saved = JSON.parse(readFileSync(join(config, 'emend', 'config.json'), 'utf8'));
    expect(saved.server).toBe(base);
    const me = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${saved.token}` } });
    expect((await me.json()).email).toBe('jo@corp.example');
    expect(exit.stdout + exit.stderr).not.toContain(saved.token);
  });

  it('refuses half of the command-line hand-off', async () => {
    const res = await fetch(`${base}/v1/auth/oidc/login?cli_port=40000`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toContain('cli_port and cli_challenge');
  });
});
