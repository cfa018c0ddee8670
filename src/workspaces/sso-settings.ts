import { and, eq, inArray, isNull, ne } from 'drizzle-orm';
import type { OidcClientConfig } from '../config/config.js';
import type { WorkspaceRole } from '../db/access-vocabulary.js';
import { ssoDomains, workspaceSso, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { decryptSecret, encryptSecret } from '../secrets/box.js';

/** An OpenID client emend signs people in through: the server's, or a workspace's own. */
export interface OidcProvider extends OidcClientConfig {
  /** The workspace whose setting this is; null for the server's (EMEND_OIDC_*). */
  workspaceId: string | null;
}

export interface SsoSetting {
  issuer: string;
  clientId: string;
  emailDomains: string[];
  defaultRole: Exclude<WorkspaceRole, 'owner'>;
  required: boolean;
  updatedAt: Date;
}

export interface SsoSettingInput {
  issuer: string;
  clientId: string;
  clientSecret: string;
  emailDomains: string[];
  defaultRole: Exclude<WorkspaceRole, 'owner'>;
  required: boolean;
}

const sealContext = (workspaceId: string) => `workspace_sso:${workspaceId}`;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/**
 * The issuer a workspace may name: https, or http on a loopback host (an identity provider run
 * beside the server for trying it out). Its address is judged by the outbound policy when saved
 * and at every sign-in (a workspace's issuer is a URL a user gave).
 */
async function checkIssuer(deps: Pick<Deps, 'outbound'>, raw: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('bad_request', `issuer: "${raw.slice(0, 100)}" is not a URL`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new AppError('bad_request', 'issuer: must be an https URL (http only on a loopback host)');
  if (url.search || url.hash || url.username || url.password)
    throw new AppError('bad_request', 'issuer: must have no query, fragment or credentials');
  await deps.outbound.check('issuer', url.href);
  return url.href.replace(/\/+$/, '');
}

function checkDomains(domains: readonly string[]): string[] {
  const out = [...new Set(domains.map((d) => d.trim().toLowerCase()))];
  for (const d of out)
    if (!DOMAIN.test(d)) throw new AppError('bad_request', `email_domains: "${d.slice(0, 100)}" is not a domain name`);
  return out;
}

/**
 * The setting's input checked and normalised: the issuer's address judged by the outbound policy
 * (which may resolve its name: done before any transaction is opened), the domains lowercased.
 */
export async function checkSsoSetting(deps: Pick<Deps, 'outbound'>, input: SsoSettingInput): Promise<SsoSettingInput> {
  return { ...input, issuer: await checkIssuer(deps, input.issuer), emailDomains: checkDomains(input.emailDomains) };
}

/** Sets (or replaces) a workspace's single sign-on (checked by checkSsoSetting). A domain another workspace takes in is a conflict. */
export async function putSsoSetting(
  deps: Pick<Deps, 'db' | 'clock' | 'secretKey'>,
  workspaceId: string,
  checked: SsoSettingInput,
): Promise<SsoSetting> {
  const { issuer, emailDomains: domains } = checked;
  const input = checked;
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    if (domains.length) {
      const taken = await tx
        .select({ domain: ssoDomains.domain })
        .from(ssoDomains)
        .where(and(inArray(ssoDomains.domain, domains), ne(ssoDomains.workspaceId, workspaceId)));
      if (taken.length)
        throw new AppError(
          'conflict',
          `email_domains: ${taken.map((t) => t.domain).join(', ')} already taken in by another workspace`,
        );
    }
    const row = {
      issuer,
      clientId: input.clientId,
      clientSecretSealed: encryptSecret(deps.secretKey, input.clientSecret, sealContext(workspaceId)),
      defaultRole: input.defaultRole,
      required: input.required,
      updatedAt: now,
    };
    await tx
      .insert(workspaceSso)
      .values({ workspaceId, ...row })
      .onConflictDoUpdate({ target: workspaceSso.workspaceId, set: row });
    await tx.delete(ssoDomains).where(eq(ssoDomains.workspaceId, workspaceId));
    // Two workspaces racing for one domain: the primary key lets one in; the other is the conflict above.
    if (domains.length)
      await tx
        .insert(ssoDomains)
        .values(domains.map((domain) => ({ domain, workspaceId })))
        .catch((err: unknown) => {
          throw /duplicate key|unique/i.test(String((err as Error)?.message ?? err))
            ? new AppError('conflict', 'email_domains: taken in by another workspace meanwhile')
            : err;
        });
  });
  return (await getSsoSetting(deps, workspaceId))!;
}

export async function getSsoSetting(deps: Pick<Deps, 'db'>, workspaceId: string): Promise<SsoSetting | undefined> {
  const [row] = await deps.db.select().from(workspaceSso).where(eq(workspaceSso.workspaceId, workspaceId));
  if (!row) return undefined;
  const domains = await deps.db
    .select({ domain: ssoDomains.domain })
    .from(ssoDomains)
    .where(eq(ssoDomains.workspaceId, workspaceId))
    .orderBy(ssoDomains.domain);
  return {
    issuer: row.issuer,
    clientId: row.clientId,
    emailDomains: domains.map((d) => d.domain),
    defaultRole: row.defaultRole as SsoSetting['defaultRole'],
    required: row.required,
    updatedAt: row.updatedAt,
  };
}

/** Removes a workspace's single sign-on and its domains; false when it had none. */
export async function deleteSsoSetting(deps: Pick<Deps, 'db'>, workspaceId: string): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    await tx.delete(ssoDomains).where(eq(ssoDomains.workspaceId, workspaceId));
    const gone = await tx.delete(workspaceSso).where(eq(workspaceSso.workspaceId, workspaceId)).returning();
    return gone.length > 0;
  });
}

/** A live workspace's provider, its secret unsealed; undefined when it has no single sign-on. */
export async function workspaceProvider(
  deps: Pick<Deps, 'db' | 'secretKey'>,
  workspaceId: string,
): Promise<(OidcProvider & { defaultRole: SsoSetting['defaultRole']; required: boolean }) | undefined> {
  const [row] = await deps.db
    .select({ sso: workspaceSso })
    .from(workspaceSso)
    .innerJoin(workspaces, and(eq(workspaces.id, workspaceSso.workspaceId), isNull(workspaces.deletedAt)))
    .where(eq(workspaceSso.workspaceId, workspaceId));
  if (!row) return undefined;
  return {
    workspaceId,
    issuer: row.sso.issuer,
    clientId: row.sso.clientId,
    clientSecret: decryptSecret(deps.secretKey, row.sso.clientSecretSealed, sealContext(workspaceId)),
    defaultRole: row.sso.defaultRole as SsoSetting['defaultRole'],
    required: row.sso.required,
  };
}

/** The workspace that takes in an email's domain, if one does. */
export async function workspaceOfDomain(deps: Pick<Deps, 'db'>, email: string): Promise<string | undefined> {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  const [row] = await deps.db.select().from(ssoDomains).where(eq(ssoDomains.domain, domain));
  return row?.workspaceId;
}

/**
 * Whether a session may act in a workspace: one that requires single sign-on admits only a
 * session signed in through its own issuer. Answers the refusal's words, or undefined.
 */
export async function ssoRefusal(
  deps: Pick<Deps, 'db'>,
  workspaceId: string,
  sessionIssuer: string | null,
): Promise<string | undefined> {
  const [row] = await deps.db
    .select({ issuer: workspaceSso.issuer, required: workspaceSso.required })
    .from(workspaceSso)
    .where(eq(workspaceSso.workspaceId, workspaceId));
  if (!row?.required || row.issuer === sessionIssuer) return undefined;
  return ssoRequiredMessage(row.issuer, workspaceId);
}

export const ssoRequiredMessage = (issuer: string, workspaceId: string) =>
  `this workspace requires single sign-on for the control panel: sign in through ${issuer} ` +
  `(/v1/auth/oidc/login?workspace=${workspaceId}); its tokens still work for the API`;
