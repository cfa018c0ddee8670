import type { CodeHostOptions, GroupHost } from '../code-host.js';
import { hookOptions } from './hook-options.js';
import { GitLabHttpError, gitLabApi, gitLabCall } from './requester.js';

/**
 * A GitLab group as a group access token's bot sees it: the bot itself (GitLab names it
 * `group_<id>_bot_<hash>`), the group by its full path, and the group's webhooks, which GitLab
 * delivers for every project of the group and its subgroups.
 */
export function gitLabGroups(options: CodeHostOptions): GroupHost {
  const api = gitLabApi(options);
  const call = gitLabCall;
  return {
    self: () =>
      call('checking the token', async () => {
        const u = (await api.Users.showCurrentUser()) as { username: string; name?: string; email?: string | null };
        // A bot's `email` is shown to itself on current GitLab (`public_email` is empty); older ones hide it.
        return { login: u.username, name: u.name || u.username, email: u.email || null };
      }),
    group: (path) =>
      call(`reading the group ${path}`, async () => {
        try {
          const g = (await api.Groups.show(path)) as { id: number; full_path: string };
          return { id: String(g.id), path: g.full_path };
        } catch (err) {
          if (err instanceof GitLabHttpError && err.status === 404) return null;
          throw err;
        }
      }),
    createGroupHook: (group, hook) =>
      call(`adding a webhook to the group ${group}`, async () => {
        const made = (await api.GroupHooks.add(group, hook.url, hookOptions(hook))) as { id: number };
        return { id: String(made.id) };
      }),
    deleteGroupHook: (group, id) =>
      call(`removing a webhook from the group ${group}`, async () => {
        try {
          await api.GroupHooks.remove(group, Number(id));
        } catch (err) {
          if (!(err instanceof GitLabHttpError && err.status === 404)) throw err;
        }
      }),
  };
}
