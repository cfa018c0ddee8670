import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBody, readBody } from '../fake-host/rest.js';
import { type PathRoutes, send } from '../fake-host/server.js';
import { type Apps, type NewApp, type Permissions, slugOf } from './apps.js';

/**
 * GitHub's web pages for Apps: the manifest flow (docs.github.com "Registering a GitHub App from a
 * manifest": POST /settings/apps/new or /organizations/ORG/settings/apps/new with `manifest`,
 * approved at once as `manifestAs`, 302 to `redirect_url?code&state`) and the install page
 * (/apps/SLUG/installations/new, approved at once as `installAs`, 302 to the setup URL with
 * `installation_id`, `setup_action` and `state`). Nobody set: the page itself (200).
 */

const MANIFEST = /^\/(?:organizations\/([^/]+)\/)?settings\/apps\/new$/;
const INSTALL = /^\/apps\/([^/]+)\/installations\/new$/;

const html = (text: string) =>
  `<html><body><p>${text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</p></body></html>`;
const page = (res: ServerResponse, status: number, text: string) =>
  send(res, status, 'text/html; charset=utf-8', html(text));
const redirect = (res: ServerResponse, location: string) =>
  send(res, 302, 'text/html; charset=utf-8', html(`You are being redirected to ${location}`), { location });

/** Who approves what a page asks (test side). */
export type Approvers = {
  manifest?: string;
  install?: { login: string; account?: string; repositories?: string[] };
};

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.map(String) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The app a manifest describes (GitHub's manifest parameters), or why it is refused. */
function fromManifest(raw: unknown): (NewApp & { redirectUrl?: string }) | string {
  let m: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(String(raw ?? ''));
    if (parsed === null || typeof parsed !== 'object') return 'The manifest is not a JSON object.';
    m = { ...parsed };
  } catch {
    return 'The manifest is not valid JSON.';
  }
  const name = str(m.name);
  if (!name) return 'Name can\u2019t be blank';
  const hook = (m.hook_attributes ?? {}) as Record<string, unknown>;
  return {
    ...{ name, description: str(m.description) ?? '', url: str(m.url) ?? '' },
    ...(str(m.redirect_url) ? { redirectUrl: str(m.redirect_url) } : {}),
    ...(str(hook.url) ? { webhookUrl: str(hook.url), webhookActive: hook.active !== false } : {}),
    ...(str(m.setup_url) ? { setupUrl: str(m.setup_url) } : {}),
    ...(strings(m.callback_urls)?.[0] ? { callbackUrl: strings(m.callback_urls)![0] } : {}),
    ...{ events: strings(m.default_events) ?? [], public: m.public === true },
    permissions: { metadata: 'read', ...((m.default_permissions ?? {}) as Permissions) },
  };
}

export function appPages(apps: Apps, approvers: Approvers): PathRoutes {
  async function manifest(req: IncomingMessage, res: ServerResponse, url: URL, org: string | undefined) {
    const body = parseBody(await readBody(req), req.headers['content-type'], true) ?? {};
    const login = approvers.manifest;
    if (!login) return page(res, 200, 'Create GitHub App (sign in to continue).');
    const asked = fromManifest(body.manifest ?? url.searchParams.get('manifest'));
    if (typeof asked === 'string') return page(res, 422, asked);
    const { redirectUrl, ...fields } = asked;
    if (!redirectUrl || !URL.canParse(redirectUrl)) return page(res, 422, 'The manifest has no valid redirect_url.');
    if (org && apps.role(org, login) !== 'admin') return page(res, 404, 'Not Found');
    if (apps.bySlug(slugOf(fields.name ?? ''))) return page(res, 422, 'Name is already in use');
    const app = apps.create({ ...fields, owner: org ?? login });
    const to = new URL(redirectUrl);
    to.searchParams.set('code', apps.manifestCode(app));
    if (url.searchParams.get('state') !== null) to.searchParams.set('state', url.searchParams.get('state')!);
    return redirect(res, to.toString());
  }

  async function install(req: IncomingMessage, res: ServerResponse, url: URL, slug: string) {
    req.resume();
    const app = apps.bySlug(slug);
    if (!app) return page(res, 404, 'Not Found');
    const who = approvers.install;
    if (!who) return page(res, 200, `Install ${app.name} (sign in to continue).`);
    const account = who.account ?? who.login;
    if (!apps.mayInstallOn(who.login, account))
      return page(res, 403, `${who.login} may not install apps on ${account}.`);
    const had = apps.installationOn(app, account);
    const inst = had ?? (await apps.installAndTell(app, account, who.repositories, who.login)).inst;
    if (had) await apps.setRepositories(had, who.repositories, who.login);
    if (!app.setupUrl) return page(res, 200, `${app.name} is installed on ${account}.`);
    const to = new URL(app.setupUrl);
    to.searchParams.set('installation_id', String(inst.id));
    to.searchParams.set('setup_action', had ? 'update' : 'install');
    if (url.searchParams.get('state') !== null) to.searchParams.set('state', url.searchParams.get('state')!);
    return redirect(res, to.toString());
  }

  return {
    matches: (path) => MANIFEST.test(path) || INSTALL.test(path),
    handle(req, res, url) {
      const m = MANIFEST.exec(url.pathname);
      if (m && req.method === 'POST') return manifest(req, res, url, m[1] && decodeURIComponent(m[1]));
      const i = INSTALL.exec(url.pathname);
      if (i && req.method === 'GET') return install(req, res, url, decodeURIComponent(i[1]!));
      req.resume();
      return Promise.resolve(page(res, 404, 'Not Found'));
    },
  };
}
