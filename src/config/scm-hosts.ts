import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type Env, type VariableSchema, parseAs, read, refuse, text, url } from './env.js';
import { ConfigError } from './error.js';

/** The kinds of code host the service has an adapter for (src/scm/kinds.ts). */
export const SCM_KINDS = ['github', 'gitlab', 'gitea'] as const;
export type ScmKindName = (typeof SCM_KINDS)[number];

/** One code host of the deployment. */
export interface ScmHostConfig {
  /** The name callers use for it (POST /v1/me/scm `host`); also the key of its connections. */
  id: string;
  kind: ScmKindName;
  /** Where people and git see repositories: https://gitlab.example.com (no trailing slash). */
  webUrl: string;
  /** Its REST API root: https://api.github.com, https://gitlab.example.com/api/v4, …/api/v1 on Gitea. */
  apiUrl: string;
  /** The OAuth app registered on it for "connect" and "sign in", when there is one. */
  oauth?: { clientId: string; clientSecret: string };
  /** The GitHub App emend acts as on this host (GitHub and GitHub Enterprise Server only). */
  app?: GitHubAppConfig;
}

/**
 * A GitHub App (docs/code-host.md, "As a GitHub App"): emend acts on the repositories it is
 * installed on with the installation's short-lived tokens, under `<slug>[bot]`.
 */
export interface GitHubAppConfig {
  appId: string;
  /** The app's URL name: its bot is `<slug>[bot]`, its install page /apps/<slug>/installations/new. */
  slug: string;
  /** The PEM private key the JWTs are signed with (read from `private_key_file`). */
  privateKey: string;
  webhookSecret: string;
  /** Its user sign-in (user-to-server OAuth): replaces a separate OAuth app on this host. */
  clientId: string;
  clientSecret: string;
}

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && !u.search;
    } catch {
      return false;
    }
  }, 'expected an http(s) URL without credentials or query')
  .transform((v) => v.replace(/\/+$/, ''));

const hostSchema = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'lower-case letters, digits and dashes, at most 40, not starting with a dash'),
  kind: z.enum(SCM_KINDS),
  web_url: httpUrl,
  api_url: httpUrl,
  oauth: z.strictObject({ client_id: z.string().min(1), client_secret: z.string().min(1) }).optional(),
  app: z
    .strictObject({
      app_id: z.union([z.number().int().positive(), z.string().regex(/^\d+$/, "the app's numeric id")]),
      slug: z.string().regex(/^[a-z0-9][a-z0-9-]{0,33}$/, "the app's URL name (lower-case letters, digits, dashes)"),
      private_key_file: z.string().min(1),
      webhook_secret: z.string().min(16, 'at least 16 characters'),
      client_id: z.string().min(1),
      client_secret: z.string().min(1),
    })
    .optional(),
});

const hostsSchema = z
  .array(hostSchema)
  .min(1, 'list at least one host')
  .max(20)
  .superRefine((hosts, ctx) => {
    const seen = new Map<string, string>();
    for (const [i, h] of hosts.entries()) {
      if (seen.has(`id:${h.id}`))
        ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `"${h.id}" is listed twice` });
      seen.set(`id:${h.id}`, h.id);
      // A repository URL must lead to one host only.
      const web = new URL(h.web_url);
      const key = `web:${web.host.toLowerCase()}${web.pathname.replace(/\/+$/, '')}`;
      if (seen.has(key))
        ctx.addIssue({ code: 'custom', path: [i, 'web_url'], message: `same web address as "${seen.get(key)}"` });
      seen.set(key, h.id);
      if (h.app && h.kind !== 'github')
        ctx.addIssue({ code: 'custom', path: [i, 'app'], message: 'an app is a GitHub App: only on a github host' });
    }
  });

/** A hosts list as JSON; a refusal says where in the list (`[1].[web_url]: …`). */
const hostsJson: VariableSchema<ScmHostConfig[]> = z.string().transform((raw, ctx) => {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return refuse(ctx, 'expected a JSON array of hosts');
  }
  const parsed = hostsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return refuse(ctx, `${issue.path.length ? `[${issue.path.join('].[')}]: ` : ''}${issue.message}`);
  }
  return parsed.data.map((h, i) => ({
    id: h.id,
    kind: h.kind,
    webUrl: h.web_url,
    apiUrl: h.api_url,
    ...(h.oauth ? { oauth: { clientId: h.oauth.client_id, clientSecret: h.oauth.client_secret } } : {}),
    ...(h.app ? { app: appOf(h.app, (message) => refuse(ctx, `[${i}].[app]: ${message}`)) } : {}),
  }));
});

/** The app's entry with its private key read from its file: a key that is not one is refused here, not at the first task. */
function appOf(
  a: {
    app_id: number | string;
    slug: string;
    private_key_file: string;
    webhook_secret: string;
    client_id: string;
    client_secret: string;
  },
  refused: (message: string) => never,
): GitHubAppConfig {
  let privateKey: string;
  try {
    privateKey = readFileSync(a.private_key_file, 'utf8');
  } catch (err) {
    return refused(`private_key_file: cannot read ${a.private_key_file}: ${(err as NodeJS.ErrnoException).code}`);
  }
  try {
    if (createPrivateKey(privateKey).asymmetricKeyType !== 'rsa') return refused('private_key_file: not an RSA key');
  } catch {
    return refused(`private_key_file: ${a.private_key_file} holds no PEM private key`);
  }
  return {
    appId: String(a.app_id),
    slug: a.slug,
    privateKey,
    webhookSecret: a.webhook_secret,
    clientId: a.client_id,
    clientSecret: a.client_secret,
  };
}

/** Where the manifest flow stores a created app, under the data directory: `<host id>.json` and `.pem`. */
export const STORED_APPS_DIR = 'github-apps';

const storedAppSchema = hostSchema.shape.app.unwrap();

/**
 * A GitHub host without an `app` in the configuration takes the one the manifest flow stored for it
 * (src/workspaces/app-manifest.ts), so creating the app in one click needs only a restart. One
 * that is listed in the configuration wins; a stored file that does not parse is refused, naming it.
 */
export function withStoredApps(hosts: ScmHostConfig[], dataDir: string): ScmHostConfig[] {
  return hosts.map((h) => {
    if (h.kind !== 'github' || h.app) return h;
    const file = join(dataDir, STORED_APPS_DIR, `${h.id}.json`);
    let raw: string;
    try {
      raw = readFileSync(file, 'utf8');
    } catch {
      return h;
    }
    const parsed = z
      .string()
      .transform((text, ctx) => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          return refuse(ctx, 'not JSON');
        }
        const entry = storedAppSchema.safeParse(json);
        if (!entry.success) return refuse(ctx, entry.error.issues[0]?.message ?? 'not an app entry');
        return appOf(entry.data, (message) => refuse(ctx, message));
      })
      .safeParse(raw);
    if (!parsed.success) throw new ConfigError('EMEND_DATA_DIR', `${file}: ${parsed.error.issues[0]?.message}`);
    return { ...h, app: parsed.data };
  });
}

/** The hosts from EMEND_SCM_HOSTS (JSON) or EMEND_SCM_HOSTS_FILE (a JSON file), in the configuration's words. */
function listed(env: Env): { variable: string; raw: string } | undefined {
  const inline = text(env, 'EMEND_SCM_HOSTS');
  const file = text(env, 'EMEND_SCM_HOSTS_FILE');
  if (inline && file) throw new ConfigError('EMEND_SCM_HOSTS', 'set this or EMEND_SCM_HOSTS_FILE, not both');
  if (inline) return { variable: 'EMEND_SCM_HOSTS', raw: inline };
  if (!file) return undefined;
  try {
    return { variable: 'EMEND_SCM_HOSTS_FILE', raw: readFileSync(file, 'utf8') };
  } catch (err) {
    throw new ConfigError('EMEND_SCM_HOSTS_FILE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code}`);
  }
}

/** EMEND_SCM_OAUTH_CLIENT_ID and _SECRET: the single GitHub host's OAuth app, both or neither. */
function singleHostOAuth(env: Env): ScmHostConfig['oauth'] {
  const clientId = text(env, 'EMEND_SCM_OAUTH_CLIENT_ID');
  const clientSecret = text(env, 'EMEND_SCM_OAUTH_CLIENT_SECRET');
  if (!clientId && !clientSecret) return undefined;
  if (!clientId)
    throw new ConfigError('EMEND_SCM_OAUTH_CLIENT_ID', 'required when EMEND_SCM_OAUTH_CLIENT_SECRET is set');
  if (!clientSecret)
    throw new ConfigError('EMEND_SCM_OAUTH_CLIENT_SECRET', 'required when EMEND_SCM_OAUTH_CLIENT_ID is set');
  return { clientId, clientSecret };
}

/**
 * The deployment's code hosts, the first being the default (docs/code-host.md). Without
 * EMEND_SCM_HOSTS(_FILE) it is the one GitHub host that EMEND_SCM_WEB_URL, EMEND_SCM_API_URL and
 * EMEND_SCM_OAUTH_* describe, with the id `github` (the id connections made before several hosts
 * were supported carry).
 */
export function scmHostsConfig(env: Env): ScmHostConfig[] {
  const source = listed(env);
  if (!source) {
    const webUrl = read(env, 'EMEND_SCM_WEB_URL', url('EMEND_SCM_WEB_URL'), 'https://github.com');
    const apiUrl = read(env, 'EMEND_SCM_API_URL', url('EMEND_SCM_API_URL'), 'https://api.github.com');
    return [{ id: 'github', kind: 'github', webUrl, apiUrl, oauth: singleHostOAuth(env) }];
  }
  for (const old of ['EMEND_SCM_WEB_URL', 'EMEND_SCM_API_URL', 'EMEND_SCM_OAUTH_CLIENT_ID']) {
    if (text(env, old)) throw new ConfigError(old, `${source.variable} lists the hosts; set this inside it instead`);
  }
  return parseAs(source.variable, source.raw, hostsJson);
}
