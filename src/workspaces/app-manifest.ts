import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { ScmError } from '../scm/code-host.js';
import type { ScmHost } from '../scm/hosts.js';
import { STORED_APPS_DIR } from '../config/scm-hosts.js';
import { appHookUrl } from '../scm/github/app.js';
import { callbackUrl } from './scm-oauth.js';

/**
 * Creating the host's GitHub App in one click (GitHub's manifest flow, docs/code-host.md): emend
 * describes the app it needs (its addresses, permissions and events), the operator's browser posts
 * that to GitHub, GitHub sends it back with a code, and emend trades the code for the app's
 * credentials and stores them in the data directory, where the configuration finds them at the
 * next start (src/config/stored-apps.ts).
 */

/** Where the credentials of a host's app are stored (0600 files under the data directory). */
export const storedAppDir = (dataDir: string) => join(dataDir, STORED_APPS_DIR);

/** The permissions emend needs (docs/code-host.md, "As a GitHub App"). */
export const APP_PERMISSIONS = {
  contents: 'write',
  pull_requests: 'write',
  issues: 'write',
  metadata: 'read',
  checks: 'read',
  // A pull request's failing checks: commit statuses, and the Actions jobs' logs (docs/triggers.md, "CI follow-ups").
  statuses: 'read',
  actions: 'read',
} as const;
export const APP_EVENTS = [
  'issues',
  'issue_comment',
  'pull_request_review',
  'pull_request_review_comment',
  'check_suite',
  'check_run',
  'status',
] as const;

/** The manifest GitHub creates the app from. */
export function appManifest(deps: Pick<Deps, 'config'>, host: ScmHost) {
  const base = deps.config.baseUrl.replace(/\/+$/, '');
  return {
    name: `emend ${new URL(base).host}`.slice(0, 34),
    url: base,
    hook_attributes: { url: appHookUrl(deps.config, host.id), active: true },
    redirect_url: `${base}/v1/apps/${encodeURIComponent(host.id)}/manifest/callback`,
    callback_urls: [callbackUrl(deps)],
    setup_url: `${base}/v1/apps/${encodeURIComponent(host.id)}/setup`,
    public: false,
    default_permissions: APP_PERMISSIONS,
    default_events: [...APP_EVENTS],
  };
}

/** GitHub's page that creates an app from a manifest: on the operator's account, or an organisation. */
export function manifestCreateUrl(host: ScmHost, org: string | undefined, state: string): string {
  const path = org ? `/organizations/${encodeURIComponent(org)}/settings/apps/new` : '/settings/apps/new';
  const url = new URL(`${host.webUrl}${path}`);
  url.searchParams.set('state', state);
  return url.href;
}

interface Conversion {
  id: number;
  slug: string;
  client_id: string;
  client_secret: string;
  webhook_secret: string | null;
  pem: string;
}

const isConversion = (v: unknown): v is Conversion => {
  if (typeof v !== 'object' || v === null) return false;
  const c = v as Record<string, unknown>;
  return (
    typeof c.id === 'number' &&
    typeof c.slug === 'string' &&
    typeof c.client_id === 'string' &&
    typeof c.client_secret === 'string' &&
    typeof c.pem === 'string' &&
    (typeof c.webhook_secret === 'string' || c.webhook_secret === null)
  );
};

/**
 * Trades the manifest flow's code for the app's credentials (POST /app-manifests/{code}/conversions,
 * which needs no authentication: the one-hour, single-use code is the proof) and stores them: the
 * key in `<host>.pem`, the rest in `<host>.json`, both readable by the service's user only.
 */
export async function convertManifest(
  deps: Pick<Deps, 'config' | 'fetch'>,
  host: ScmHost,
  code: string,
): Promise<{ slug: string; appId: number; file: string }> {
  let res: Response;
  try {
    res = await deps.fetch(`${host.apiUrl}/app-manifests/${encodeURIComponent(code)}/conversions`, {
      method: 'POST',
      headers: { accept: 'application/vnd.github+json', 'user-agent': 'emend' },
      signal: AbortSignal.timeout(20_000),
    });
  } catch {
    throw new AppError('scm_unavailable', `${host.id} could not be reached to finish creating the app`);
  }
  const body: unknown = await res.json().catch(() => undefined);
  if (res.status === 404 || res.status === 422)
    throw new AppError('bad_request', `code: ${host.id} does not know it (it is single-use and lives an hour)`);
  if (!res.ok || !isConversion(body))
    throw new AppError('scm_unavailable', new ScmError(res.status, `${host.id} answered HTTP ${res.status}`).message);
  if (!body.webhook_secret)
    throw new AppError('bad_request', `the app ${body.slug} was created without a webhook secret; create it again`);
  const dir = storedAppDir(deps.config.dataDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const keyFile = join(dir, `${host.id}.pem`);
  await writeFile(keyFile, body.pem, { mode: 0o600 });
  const file = join(dir, `${host.id}.json`);
  const entry = {
    app_id: body.id,
    slug: body.slug,
    private_key_file: keyFile,
    webhook_secret: body.webhook_secret,
    client_id: body.client_id,
    client_secret: body.client_secret,
  };
  await writeFile(file, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
  return { slug: body.slug, appId: body.id, file };
}
