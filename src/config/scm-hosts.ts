import { readFileSync } from 'node:fs';
import { z } from 'zod';
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
    }
  });

/** The hosts from EMEND_SCM_HOSTS (JSON) or EMEND_SCM_HOSTS_FILE (a JSON file), in the configuration's words. */
function listed(env: Record<string, string | undefined>): { variable: string; raw: string } | undefined {
  const inline = env.EMEND_SCM_HOSTS?.trim();
  const file = env.EMEND_SCM_HOSTS_FILE?.trim();
  if (inline && file) throw new ConfigError('EMEND_SCM_HOSTS', 'set this or EMEND_SCM_HOSTS_FILE, not both');
  if (inline) return { variable: 'EMEND_SCM_HOSTS', raw: inline };
  if (!file) return undefined;
  try {
    return { variable: 'EMEND_SCM_HOSTS_FILE', raw: readFileSync(file, 'utf8') };
  } catch (err) {
    throw new ConfigError('EMEND_SCM_HOSTS_FILE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code}`);
  }
}

/**
 * The deployment's code hosts. Without EMEND_SCM_HOSTS(_FILE) it is the one GitHub host that
 * EMEND_SCM_WEB_URL, EMEND_SCM_API_URL and EMEND_SCM_OAUTH_* describe, with the id `github`
 * (the id connections made before several hosts were supported carry).
 */
export function scmHostsFrom(
  env: Record<string, string | undefined>,
  legacy: { webUrl(): string; apiUrl(): string; oauth(): ScmHostConfig['oauth'] },
): ScmHostConfig[] {
  const source = listed(env);
  if (!source)
    return [{ id: 'github', kind: 'github', webUrl: legacy.webUrl(), apiUrl: legacy.apiUrl(), oauth: legacy.oauth() }];
  for (const old of ['EMEND_SCM_WEB_URL', 'EMEND_SCM_API_URL', 'EMEND_SCM_OAUTH_CLIENT_ID']) {
    if (env[old]?.trim()) throw new ConfigError(old, `${source.variable} lists the hosts; set this inside it instead`);
  }
  let json: unknown;
  try {
    json = JSON.parse(source.raw);
  } catch {
    throw new ConfigError(source.variable, 'expected a JSON array of hosts');
  }
  const parsed = hostsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(
      source.variable,
      `${issue.path.length ? `[${issue.path.join('].[')}]: ` : ''}${issue.message}`,
    );
  }
  return parsed.data.map((h) => ({
    id: h.id,
    kind: h.kind,
    webUrl: h.web_url,
    apiUrl: h.api_url,
    ...(h.oauth ? { oauth: { clientId: h.oauth.client_id, clientSecret: h.oauth.client_secret } } : {}),
  }));
}
