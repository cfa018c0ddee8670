import type { CodeHostOptions, GroupHost } from '../code-host.js';
import { giteaCall } from './api.js';
import { hookBody } from './hooks.js';

/**
 * A Gitea (or Forgejo) organisation as a bot account's token sees it: the account, the
 * organisation, and the organisation's webhooks, which Gitea delivers for every repository it owns.
 */
export function giteaOrgs(options: CodeHostOptions): GroupHost {
  const call = giteaCall(options);
  const orgPath = (org: string) => `/orgs/${encodeURIComponent(org)}`;
  return {
    self: async () => {
      const { data } = await call<{ login: string; full_name?: string; email?: string }>(
        'checking the token',
        'GET',
        '/user',
      );
      return { login: data.login, name: data.full_name || data.login, email: data.email || null };
    },
    group: async (org) => {
      const { status, data } = await call<{ id: number; username?: string; name?: string }>(
        `reading the organisation ${org}`,
        'GET',
        orgPath(org),
        { accept: [404] },
      );
      return status === 404 ? null : { id: String(data.id), path: data.username ?? data.name ?? org };
    },
    createGroupHook: async (org, hook) => {
      const what = `adding a webhook to the organisation ${org}`;
      const { data } = await call<{ id: number }>(what, 'POST', `${orgPath(org)}/hooks`, { body: hookBody(hook) });
      return { id: String(data.id) };
    },
    deleteGroupHook: async (org, id) => {
      const what = `removing a webhook from the organisation ${org}`;
      await call(what, 'DELETE', `${orgPath(org)}/hooks/${encodeURIComponent(id)}`, { accept: [404] });
    },
  };
}
