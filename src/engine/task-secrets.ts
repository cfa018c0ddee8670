import { listProviderKeys, keyContext } from '../workspaces/provider-keys.js';
import { storedScmTokens } from '../workspaces/scm-connection.js';
import { groupBotSecrets } from '../workspaces/group-bots.js';
import type { Deps } from '../deps.js';
import { repoSettingsFor } from '../repos/repo-settings.js';
import { decryptSecret } from '../secrets/box.js';
import type { Task } from '../tasks/service.js';
import { secretNeedles } from '../text/redact.js';
import { listTriggers, triggerSecret } from '../triggers/repo-triggers.js';
import { listEndpoints, signingSecretOf } from '../webhooks/endpoints.js';

type SecretDeps = Pick<Deps, 'db' | 'config' | 'secretKey'>;

/** The service's own key as an operator may have written it (EMEND_SECRET_KEY, the key file): hex or base64. */
const keyForms = (key: Buffer) => [
  key.toString('hex'),
  key.toString('hex').toUpperCase(),
  key.toString('base64'),
  key.toString('base64url'),
];

/**
 * Every secret the service knows for a task, for the model client to redact from each request
 * (docs/security.md, "Model calls"): the operator's provider keys and the workspace's own (BYOK),
 * the workspace's code-host tokens (access and refresh, every host), the repository's setup-only
 * secrets, the workspace's webhook signing secrets and trigger secrets, the operator's OAuth client
 * secrets and the service's own encryption key. The database URL's password is not among them: the
 * service alone uses it, and a short or common one would mangle ordinary text. Longest first,
 * shorter than 4 characters left out.
 */
export async function taskSecrets(deps: SecretDeps, task: Pick<Task, 'workspaceId' | 'repoUrl'>): Promise<string[]> {
  const { config, secretKey } = deps;
  const secrets: string[] = [
    ...Object.values(config.providerKeys).filter((k): k is string => !!k),
    ...config.scmHosts.flatMap((h) => (h.oauth ? [h.oauth.clientSecret] : [])),
    ...keyForms(secretKey),
  ];
  for (const k of await listProviderKeys(deps, task.workspaceId))
    secrets.push(decryptSecret(secretKey, k.keyEnc, keyContext(task.workspaceId, k.provider)));
  secrets.push(...(await storedScmTokens(deps, task.workspaceId)));
  secrets.push(...(await groupBotSecrets(deps, task.workspaceId)));
  for (const e of await listEndpoints(deps, task.workspaceId)) secrets.push(signingSecretOf(deps, e));
  for (const t of await listTriggers(deps, task.workspaceId)) secrets.push(triggerSecret(deps, t));
  if (task.repoUrl) {
    const settings = await repoSettingsFor(deps, task.workspaceId, task.repoUrl);
    secrets.push(...Object.values(settings.setupSecrets));
  }
  return secretNeedles(secrets);
}
