import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type JWK, SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK } from 'jose';
import Provider from 'oidc-provider';
import { startHarness } from './harness.js';
import { heldPort } from './ports.js';

/**
 * A real OpenID Connect provider (the `oidc-provider` package) on loopback, for single sign-on
 * tests: authorization code with PKCE, id_tokens signed with a key it publishes in its JWKS.
 * What a test controls: who is signing in (`as`), who exists (`addUser`, `removeUser`), the
 * signing key (`rotateKey`), and a tampering of the id_token the token endpoint returns
 * (`tamper`), re-signed with the provider's own key so that only the claim changed is wrong.
 */
export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  addUser(sub: string, claims: { email: string; email_verified?: boolean; name?: string }): void;
  removeUser(sub: string): void;
  /** The person who signs in at the provider's login page next. */
  as(sub: string): void;
  rotateKey(): Promise<void>;
  tamper(change: ((claims: Record<string, unknown>) => Record<string, unknown>) | 'break-signature' | undefined): void;
  /** The kid of the key the provider signs with now. */
  kid(): string;
  close(): Promise<void>;
}

interface User {
  email: string;
  email_verified: boolean;
  name: string;
}

export async function startOidcProvider(options: { redirectUri: string }): Promise<TestOidcProvider> {
  const users = new Map<string, User>();
  let current = '';
  let tampering: ((claims: Record<string, unknown>) => Record<string, unknown>) | 'break-signature' | undefined;
  let key: JWK;
  let handler: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'emend-test';
  const clientSecret = 'idp-client-secret-0123456789';
  let generation = 0;

  async function newKey(): Promise<JWK> {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    return { ...(await exportJWK(privateKey)), kid: `key-${++generation}`, alg: 'RS256', use: 'sig' };
  }

  function build(): Provider {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: clientId,
          client_secret: clientSecret,
          redirect_uris: [options.redirectUri],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      jwks: { keys: [key] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      pkce: { required: () => true },
      cookies: { keys: ['test-cookie-key'] },
      findAccount: async (_ctx, sub) => {
        const user = users.get(sub);
        return user ? { accountId: sub, claims: async () => ({ sub, ...user }) } : undefined;
      },
      // No consent page: the test's client is trusted with the scopes it asks for.
      loadExistingGrant: async (ctx) => {
        const accountId = ctx.oidc.session?.accountId;
        const clientId = ctx.oidc.client?.clientId;
        if (!accountId || !clientId) return undefined;
        const grant = new ctx.oidc.provider.Grant({ accountId, clientId });
        grant.addOIDCScope('openid email profile');
        await grant.save();
        return grant;
      },
    });
    // The tampering: the token endpoint's id_token, changed and signed again with the provider's key.
    provider.use(async (ctx, next) => {
      await next();
      const body = ctx.body as { id_token?: string } | undefined;
      if (ctx.path !== '/token' || !tampering || !body?.id_token) return;
      if (tampering === 'break-signature') {
        const [h, p, s] = body.id_token.split('.');
        const claims = { ...decodeJwt(body.id_token), name: 'someone else' };
        ctx.body = { ...body, id_token: `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}` };
        void p;
        return;
      }
      const header = decodeProtectedHeader(body.id_token);
      const claims = tampering(decodeJwt(body.id_token) as Record<string, unknown>);
      const signed = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: header.kid })
        .sign(await importJWK(key, 'RS256'));
      ctx.body = { ...body, id_token: signed };
    });
    return provider;
  }

  async function install() {
    const provider = build();
    const callback = provider.callback();
    handler = (req, res) => {
      const match = req.url?.match(/^\/interaction\/([^/?]+)/);
      if (!match) return callback(req, res);
      // The login page: the person named by `as` signs in, or the provider refuses one it no longer has.
      void (async () => {
        try {
          await provider.interactionDetails(req, res);
          const result = users.has(current)
            ? { login: { accountId: current } }
            : { error: 'access_denied', error_description: `no user ${current} here` };
          await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
        } catch (err) {
          res.statusCode = 500;
          res.end(String(err));
        }
      })();
    };
  }

  key = await newKey();
  await install();

  return {
    issuer,
    clientId,
    clientSecret,
    addUser: (sub, claims) =>
      users.set(sub, { email: claims.email, email_verified: claims.email_verified ?? true, name: claims.name ?? sub }),
    removeUser: (sub) => void users.delete(sub),
    as: (sub) => {
      current = sub;
    },
    async rotateKey() {
      key = await newKey();
      await install();
    },
    tamper: (change) => {
      tampering = change;
    },
    kid: () => String(key.kid),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The service on a real port whose address its OpenID provider knows before it listens (the
 * redirect URI names it), signing in through that provider as the server's own (EMEND_OIDC_*).
 */
export async function serveWithOidc(env: (idp: TestOidcProvider) => Record<string, string> = () => ({})) {
  const held = await heldPort();
  const base = `http://127.0.0.1:${held.port}`;
  const idp = await startOidcProvider({ redirectUri: `${base}/v1/auth/oidc/callback` });
  const h = await startHarness({
    EMEND_BASE_URL: base,
    EMEND_OIDC_ISSUER: idp.issuer,
    EMEND_OIDC_CLIENT_ID: idp.clientId,
    EMEND_OIDC_CLIENT_SECRET: idp.clientSecret,
    ...env(idp),
  });
  await held.release();
  await h.app.listen({ host: '127.0.0.1', port: held.port });
  return {
    h,
    idp,
    base,
    close: async () => {
      await h.close();
      await idp.close();
    },
  };
}
