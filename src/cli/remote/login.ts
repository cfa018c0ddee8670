import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as prompts from '@clack/prompts';
import { connect } from './api.js';
import { configPath, normalServer, readSavedLogin, removeLogin, saveLogin, serverIdentity } from './config.js';
import { EXIT, type Output, printJson } from './output.js';

/** A secret the user gives: the whole of stdin when it is piped, else typed at a hidden prompt. */
export async function readSecret(what: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8').trim();
  }
  const typed = await prompts.password({ message: what, output: process.stderr });
  if (prompts.isCancel(typed)) throw new CancelledInput();
  return typed.trim();
}

/** The user stopped a prompt (Ctrl-C or Escape). */
export class CancelledInput extends Error {
  constructor() {
    super('cancelled');
  }
}

/**
 * `emend login --server URL`: checks the token with GET /v1/me before saving it, so a typo is
 * refused here and not at the first real command.
 */
export async function login(env: NodeJS.ProcessEnv, o: Output, serverFlag: string): Promise<number> {
  const server = normalServer(serverFlag);
  const token = await readSecret(`Token for ${server}`);
  if (token === '') {
    o.err('emend: no token given (pipe it on stdin or type it at the prompt)');
    return EXIT.usage;
  }
  return saveChecked(env, o, server, token);
}

/** Checks the token with GET /v1/me, then saves the login and says so. */
async function saveChecked(env: NodeJS.ProcessEnv, o: Output, server: string, token: string): Promise<number> {
  const me = await connect({ server, token }).me();
  const path = saveLogin(env, { server, token });
  if (o.json) printJson(o, { server, email: me.email, config: path });
  else o.out(`logged in to ${server} as ${me.email} (saved in ${path})`);
  if (env.EMEND_TOKEN) o.err('note: EMEND_TOKEN is set in this environment and is sent instead of the saved token');
  else if (env.EMEND_SERVER && !sameServer(env.EMEND_SERVER, server))
    o.err(`note: EMEND_SERVER names another server in this environment; the saved token goes only to ${server}`);
  return EXIT.ok;
}

/** How long `emend login --sso` waits for the browser to come back. */
const SSO_WAIT_MS = 10 * 60_000;

/**
 * `emend login --server URL --sso [--email E | --workspace ID]`: single sign-on in a browser. The
 * command listens on a loopback port, prints the address to open, and the server's callback sends
 * the browser back to that port with a code, which the command trades (with a PKCE verifier only
 * it holds) for a token of the person's; then as `emend login` with a token.
 */
export async function loginWithSso(
  env: NodeJS.ProcessEnv,
  o: Output,
  serverFlag: string,
  which: { email?: string; workspace?: string },
): Promise<number> {
  const server = normalServer(serverFlag);
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  let arrive: (code: string) => void = () => undefined;
  const arrived = new Promise<string>((resolve) => {
    arrive = resolve;
  });
  const listener = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const code = url.pathname === '/callback' ? url.searchParams.get('code') : null;
    if (!code) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not here');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>emend</title><p>Signed in: you can close this tab and go back to the terminal.</p>');
    arrive(code);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  try {
    const query = new URLSearchParams({
      cli_port: String((listener.address() as AddressInfo).port),
      cli_challenge: challenge,
    });
    if (which.email) query.set('email', which.email);
    if (which.workspace) query.set('workspace', which.workspace);
    o.err(`Open this address in a browser to sign in:\n  ${server}/v1/auth/oidc/login?${query}`);
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      arrived,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), SSO_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (code === undefined) {
      o.err('emend: no sign-in came back within 10 minutes');
      return EXIT.usage;
    }
    const res = await fetch(`${server}/v1/auth/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code, verifier }),
    });
    const body = (await res.json().catch(() => ({}))) as { token?: string; message?: string };
    if (!res.ok || !body.token) {
      o.err(`emend: the server refused the sign-in's code: ${body.message ?? res.status}`);
      return EXIT.usage;
    }
    return await saveChecked(env, o, server, body.token);
  } finally {
    listener.close();
  }
}

/** False too when `other` is no http(s) address (the next command says so; the login is saved). */
function sameServer(other: string, server: string): boolean {
  try {
    return serverIdentity(other) === serverIdentity(server);
  } catch {
    return false;
  }
}

export function logout(env: NodeJS.ProcessEnv, o: Output): number {
  const server = readSavedLogin(env).server;
  const removed = removeLogin(env);
  o.out(removed ? `logged out${server ? ` of ${server}` : ''}` : `not logged in (no ${configPath(env)})`);
  if (env.EMEND_TOKEN) o.err('note: EMEND_TOKEN is still set in this environment');
  return EXIT.ok;
}
