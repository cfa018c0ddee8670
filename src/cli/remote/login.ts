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
  const me = await connect({ server, token }).me();
  const path = saveLogin(env, { server, token });
  if (o.json) printJson(o, { server, email: me.email, config: path });
  else o.out(`logged in to ${server} as ${me.email} (saved in ${path})`);
  if (env.EMEND_TOKEN) o.err('note: EMEND_TOKEN is set in this environment and is sent instead of the saved token');
  else if (env.EMEND_SERVER && !sameServer(env.EMEND_SERVER, server))
    o.err(`note: EMEND_SERVER names another server in this environment; the saved token goes only to ${server}`);
  return EXIT.ok;
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
