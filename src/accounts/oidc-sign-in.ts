import { createHash } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import * as oidc from 'openid-client';
import type { WorkspaceRole } from '../db/access-vocabulary.js';
import { accounts, oidcIdentities, workspaceMembers } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { refusalIn } from '../outbound/refused.js';
import { decryptSecret, encryptSecret } from '../secrets/box.js';
import { type OidcProvider, workspaceOfDomain, workspaceProvider } from '../workspaces/sso-settings.js';
import { createAccount, findAccountByEmail } from './accounts.js';

/**
 * Signing in through an OpenID Connect provider (docs/teams.md, "Single sign-on"): authorization
 * code with PKCE, a state and a nonce bound to the browser by a sealed cookie, the id_token checked
 * by openid-client (issuer, audience, expiry on emend's clock, signature from the provider's JWKS).
 * The provider's metadata and keys are read at each sign-in: a rotated key is honoured at once,
 * and a sign-in is rare enough that two more requests cost nothing.
 */

export type OidcDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'secretKey' | 'fetch' | 'outbound'>;

/** The browser's cookie for one sign-in in flight (Lax: the provider sends the browser back cross-site). */
export const OIDC_FLOW_COOKIE = 'emend_oidc';
export const OIDC_FLOW_TTL_MS = 10 * 60_000;
const FLOW_CONTEXT = 'oidc-flow';

export const oidcCallbackUrl = (deps: Pick<Deps, 'config'>) => `${deps.config.baseUrl}/v1/auth/oidc/callback`;

/** What the sealed cookie carries: the provider, and the secrets the callback must match. */
interface Flow {
  /** the workspace whose provider this is; null: the server's */
  w: string | null;
  i: string;
  s: string;
  n: string;
  v: string;
  e: number;
  /** `emend login --sso`: the command's loopback port and its PKCE challenge (S256) for the hand-off */
  c?: { p: number; h: string };
}

/** A provider, with the role a workspace's gives people it takes in. */
type SignInProvider = OidcProvider & { defaultRole?: WorkspaceRole };

/** The provider a sign-in goes through: a workspace's, the one an email's domain maps to, else the server's. */
export async function providerFor(
  deps: Pick<Deps, 'db' | 'config' | 'secretKey'>,
  which: { workspace?: string; email?: string },
): Promise<OidcProvider> {
  const workspaceId = which.workspace ?? (which.email ? await workspaceOfDomain(deps, which.email) : undefined);
  if (workspaceId) {
    const provider = await workspaceProvider(deps, workspaceId);
    if (provider) return provider;
    if (which.workspace) throw new AppError('not_found', `workspace ${which.workspace} has no single sign-on`);
  }
  if (deps.config.oidc) return { ...deps.config.oidc, workspaceId: null };
  throw new AppError(
    'not_found',
    which.email
      ? `no single sign-on takes in ${which.email.slice(which.email.lastIndexOf('@') + 1)}, and this server has none of its own`
      : 'this server has no single sign-on (EMEND_OIDC_ISSUER)',
  );
}

/**
 * The provider's configuration, read through the outbound policy for a workspace's (a URL a user
 * gave) and directly for the operator's. Checks on id_tokens use emend's clock.
 */
async function configurationOf(deps: OidcDeps, provider: OidcProvider): Promise<oidc.Configuration> {
  const issuer = new URL(provider.issuer);
  const fetch = provider.workspaceId ? deps.outbound.fetchFor('issuer') : deps.fetch;
  try {
    const config = await oidc.discovery(
      issuer,
      provider.clientId,
      {
        client_secret: provider.clientSecret,
        [oidc.clockSkew]: Math.round((deps.clock.now().getTime() - Date.now()) / 1000),
      },
      undefined,
      {
        [oidc.customFetch]: (url, options) => fetch(url, options as RequestInit),
        // http only where the setting allowed it (a loopback issuer, src/workspaces/sso-settings.ts).
        ...(issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
      },
    );
    // The id_token's signature is checked against the provider's JWKS, not taken on the word of
    // the TLS connection it came over (which the specification would allow).
    oidc.enableNonRepudiationChecks(config);
    return config;
  } catch (err) {
    throw providerError(provider, err);
  }
}

function providerError(provider: OidcProvider, err: unknown): AppError {
  const refused = refusalIn(err);
  if (refused) return refused;
  if (err instanceof AppError) return err;
  if (err instanceof oidc.AuthorizationResponseError)
    return new AppError(
      'forbidden',
      `the identity provider refused the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
    );
  const message = messagesOf(err);
  if (err instanceof oidc.ClientError && err.code !== 'OAUTH_RESPONSE_IS_NOT_CONFORM')
    return new AppError('unauthorized', `the sign-in's answer from ${provider.issuer} was refused: ${message}`);
  if (err instanceof oidc.ResponseBodyError)
    return new AppError(
      'unauthorized',
      `${provider.issuer} refused the sign-in: ${err.error} (${err.error_description ?? message})`,
    );
  return new AppError(
    'unavailable',
    `the identity provider ${provider.issuer} could not be reached or answered wrongly: ${message}`,
  );
}

/** An error's message with its causes' (openid-client wraps the check that failed, which names the claim). */
function messagesOf(err: unknown): string {
  const seen: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++)
    if (!seen.includes(e.message)) seen.push(e.message);
  return seen.join(': ') || String(err);
}

/** Starts a sign-in: the provider's authorize URL, and the sealed cookie the callback needs. */
export async function startOidcSignIn(
  deps: OidcDeps,
  provider: OidcProvider,
  cli?: { port: number; challenge: string },
): Promise<{ url: string; cookie: string }> {
  const config = await configurationOf(deps, provider);
  const flow: Flow = {
    w: provider.workspaceId,
    i: provider.issuer,
    s: oidc.randomState(),
    n: oidc.randomNonce(),
    v: oidc.randomPKCECodeVerifier(),
    e: deps.clock.now().getTime() + OIDC_FLOW_TTL_MS,
    ...(cli ? { c: { p: cli.port, h: cli.challenge } } : {}),
  };
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: oidcCallbackUrl(deps),
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(flow.v),
    code_challenge_method: 'S256',
    state: flow.s,
    nonce: flow.n,
  });
  return { url: url.href, cookie: encryptSecret(deps.secretKey, JSON.stringify(flow), FLOW_CONTEXT) };
}

function openFlow(deps: Pick<Deps, 'secretKey' | 'clock'>, cookie: string | undefined): Flow {
  const again = (why: string) => new AppError('bad_request', `${why}; start the sign-in again`);
  if (!cookie) throw again('this sign-in was started in another browser or has already been used');
  let flow: Flow;
  try {
    flow = JSON.parse(decryptSecret(deps.secretKey, cookie, FLOW_CONTEXT)) as Flow;
  } catch {
    throw again('this sign-in’s cookie is not one this server set');
  }
  if (deps.clock.now().getTime() > flow.e) throw again('this sign-in took longer than 10 minutes');
  return flow;
}

/** Who signed in: the account, the workspace the session opens in, the issuer it came through. */
export interface OidcSignIn {
  accountId: string;
  email: string;
  workspaceId: string;
  issuer: string;
  joined: boolean;
  /** Set when the sign-in was started by `emend login --sso`: where its token goes (cliHandOff). */
  cli?: { port: number; challenge: string };
}

/**
 * The callback: checks the answer against the browser's flow and the id_token, then finds or makes
 * the person's account (docs/decisions.md, "Single sign-on finds a person by issuer and subject").
 */
export async function verifyOidcCallback(
  deps: OidcDeps,
  input: { cookie: string | undefined; query: string },
): Promise<VerifiedSignIn> {
  const flow = openFlow(deps, input.cookie);
  const provider: SignInProvider | undefined = flow.w
    ? await workspaceProvider(deps, flow.w)
    : deps.config.oidc && { ...deps.config.oidc, workspaceId: null };
  if (!provider || provider.issuer !== flow.i)
    throw new AppError('bad_request', 'the single sign-on setting changed during the sign-in; start it again');
  const config = await configurationOf(deps, provider);
  let claims: oidc.IDToken;
  try {
    const tokens = await oidc.authorizationCodeGrant(config, new URL(`${oidcCallbackUrl(deps)}?${input.query}`), {
      pkceCodeVerifier: flow.v,
      expectedState: flow.s,
      expectedNonce: flow.n,
      idTokenExpected: true,
    });
    claims = tokens.claims()!;
    // Many providers put the email in the userinfo answer only (the id_token carries the subject).
    if (claims.email === undefined)
      claims = { ...claims, ...(await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)), sub: claims.sub };
  } catch (err) {
    throw providerError(provider, err);
  }
  return { provider, claims, ...(flow.c ? { cli: { port: flow.c.p, challenge: flow.c.h } } : {}) };
}

/** A callback the provider's answer and the id_token passed (verifyOidcCallback). */
export interface VerifiedSignIn {
  provider: SignInProvider;
  claims: oidc.IDToken;
  cli?: { port: number; challenge: string };
}

/**
 * The person of a verified sign-in: their account found or made, taken into the workspace of a
 * workspace's provider. Database only, so the caller runs it in the transaction that also makes the
 * session and its audit row.
 */
export async function admitOidcPerson(
  deps: OidcDeps,
  verified: VerifiedSignIn,
  signedInAs: string | undefined,
): Promise<OidcSignIn> {
  const { provider, claims } = verified;
  const identity = { issuer: provider.issuer, subject: claims.sub };
  const known = async () => {
    const [row] = await deps.db
      .select({ accountId: oidcIdentities.accountId, email: accounts.email })
      .from(oidcIdentities)
      .innerJoin(accounts, eq(accounts.id, oidcIdentities.accountId))
      .where(and(eq(oidcIdentities.issuer, identity.issuer), eq(oidcIdentities.subject, identity.subject)));
    return row;
  };
  let person = await known();
  if (!person) {
    const first = await firstSignIn(deps, provider, claims, signedInAs);
    // Two callbacks of one new person at once: the primary key keeps one link, both read it.
    await deps.db
      .insert(oidcIdentities)
      .values({ ...identity, accountId: first.accountId, createdAt: deps.clock.now() })
      .onConflictDoNothing();
    person = (await known())!;
  }
  // A workspace's provider opens the session in that workspace, taking a person of one of its
  // domains in with its default role the first time.
  let joined = false;
  if (provider.workspaceId) {
    const [member] = await deps.db
      .select({ role: workspaceMembers.role })
      .from(workspaceMembers)
      .where(
        and(eq(workspaceMembers.workspaceId, provider.workspaceId), eq(workspaceMembers.accountId, person.accountId)),
      );
    if (!member) {
      if ((await workspaceOfDomain(deps, person.email)) !== provider.workspaceId)
        throw new AppError(
          'forbidden',
          `you signed in as ${person.email}, whose domain this workspace does not take in; ask its owner for an invitation`,
        );
      const added = await deps.db
        .insert(workspaceMembers)
        .values({
          workspaceId: provider.workspaceId,
          accountId: person.accountId,
          role: provider.defaultRole ?? 'member',
          createdAt: deps.clock.now(),
        })
        .onConflictDoNothing()
        .returning();
      joined = added.length > 0;
    }
  }
  return {
    accountId: person.accountId,
    email: person.email,
    workspaceId: provider.workspaceId ?? person.accountId,
    issuer: provider.issuer,
    joined,
    ...(verified.cli ? { cli: verified.cli } : {}),
  };
}

/**
 * A subject the server has not seen: the account of the browser already signed in (it links the
 * identity), else an account made for the email the provider vouches for. The operator's provider
 * may also sign in an account that has that email; a workspace's may not (its owner chose the
 * provider, and could otherwise sign in as anyone).
 */
async function firstSignIn(
  deps: OidcDeps,
  provider: OidcProvider,
  claims: oidc.IDToken,
  signedInAs: string | undefined,
): Promise<{ accountId: string; email: string }> {
  if (signedInAs) {
    const [row] = await deps.db.select({ email: accounts.email }).from(accounts).where(eq(accounts.id, signedInAs));
    if (row) return { accountId: signedInAs, email: row.email };
  }
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email || claims.email_verified !== true)
    throw new AppError(
      'forbidden',
      `${provider.issuer} does not vouch for an email address of this person (email, email_verified): emend cannot tell who they are`,
    );
  const existing = await findAccountByEmail(deps, email);
  if (existing) {
    if (provider.workspaceId)
      throw new AppError(
        'conflict',
        `an emend account already has the email ${email}: sign in to it first (with a token), then sign in through single sign-on to link the two`,
      );
    return { accountId: existing.account.id, email };
  }
  if (provider.workspaceId && (await workspaceOfDomain(deps, email)) !== provider.workspaceId)
    throw new AppError('forbidden', `you signed in as ${email}, whose domain this workspace does not take in`);
  const name = typeof claims.name === 'string' ? claims.name.slice(0, 200) : '';
  const made = await createAccount(deps, { email, name });
  return { accountId: made.account.id, email };
}

/**
 * `emend login --sso` (docs/teams.md): the callback sends the browser to the command's loopback
 * address with a code; the command trades it, with the PKCE verifier only it holds, for the token
 * (POST /v1/auth/oidc/token). The code is the token's secret sealed with the server's key, its
 * challenge and two minutes' life: nothing is stored, and a code seen on the way (a browser's
 * history) is useless without the verifier.
 */
const CLI_CONTEXT = 'oidc-cli';
export const CLI_CODE_TTL_MS = 2 * 60_000;

export function cliCode(deps: Pick<Deps, 'secretKey' | 'clock'>, token: string, challenge: string): string {
  return encryptSecret(
    deps.secretKey,
    JSON.stringify({ t: token, h: challenge, e: deps.clock.now().getTime() + CLI_CODE_TTL_MS }),
    CLI_CONTEXT,
  );
}

export function tokenOfCliCode(deps: Pick<Deps, 'secretKey' | 'clock'>, code: string, verifier: string): string {
  let sealed: { t: string; h: string; e: number };
  try {
    sealed = JSON.parse(decryptSecret(deps.secretKey, code, CLI_CONTEXT)) as typeof sealed;
  } catch {
    throw new AppError('bad_request', 'code: not one this server issued');
  }
  if (deps.clock.now().getTime() > sealed.e) throw new AppError('bad_request', 'code: expired; run emend login again');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  if (challenge !== sealed.h) throw new AppError('bad_request', 'verifier: does not match the sign-in’s challenge');
  return sealed.t;
}
