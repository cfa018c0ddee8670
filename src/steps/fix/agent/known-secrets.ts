import { eq } from 'drizzle-orm';
import { keyContext } from '../../../accounts/provider-keys.js';
import { chosenHost, scmTokenOn } from '../../../accounts/scm-connection.js';
import { providerKeys } from '../../../db/schema.js';
import type { Deps } from '../../../deps.js';
import { repoSettingsFor } from '../../../repos/repo-settings.js';
import { parseRepoUrl } from '../../../scm/urls.js';
import { decryptSecret } from '../../../secrets/box.js';
import type { Task } from '../../../tasks/task.js';
import { redact } from '../../../validator/setup-output.js';

/**
 * Every secret the service knows that a command's output could carry, for the agent to redact
 * before the model (or the log) sees an observation: the operator's provider keys, the account's
 * own (BYOK) keys, its code-host token for the task's host, and the repository's setup-only
 * secrets. The sandbox gives the commands none of them; this is the second wall.
 */
export async function knownSecrets(
  deps: Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock'>,
  task: Pick<Task, 'workspaceId' | 'repoUrl'>,
): Promise<string[]> {
  const secrets: string[] = Object.values(deps.config.providerKeys).filter((k): k is string => !!k);
  const saved = await deps.db.select().from(providerKeys).where(eq(providerKeys.workspaceId, task.workspaceId));
  for (const k of saved)
    secrets.push(decryptSecret(deps.secretKey, k.keyEnc, keyContext(task.workspaceId, k.provider)));
  if (task.repoUrl) {
    const repo = parseRepoUrl(task.repoUrl, deps.config);
    const token = await scmTokenOn(deps, task.workspaceId, chosenHost(deps, repo.host)).catch(() => undefined);
    if (token) secrets.push(token);
    const settings = await repoSettingsFor(deps, task.workspaceId, task.repoUrl);
    secrets.push(...Object.values(settings.setupSecrets));
  }
  // Longest first, so that a secret holding another is replaced whole.
  return [...new Set(secrets)].sort((a, b) => b.length - a.length);
}

/** `text` with every known secret replaced by [redacted]. */
export const redactWith = (secrets: string[]) => (text: string) => redact(text, secrets);
