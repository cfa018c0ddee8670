import { and, asc, eq } from 'drizzle-orm';
import type { Within } from '../db/client.js';
import { repoSecrets, repoSettings } from '../db/schema.js';
import { lockWorkspace } from '../workspaces/workspaces.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { repoKey } from '../memory/repo-memory.js';
import { decryptSecret, encryptSecret } from '../secrets/box.js';
import { checkAttemptsAllowed } from '../billing/attempt-limit.js';
import { billingPlan, billingPlanNameOf } from '../billing/billing-plan.js';
import type { Tx } from '../db/client.js';
import {
  SETTINGS_LIMITS,
  checkCommand,
  checkEnv,
  checkEnvName,
  checkName,
  checkSecretValue,
} from './settings-rules.js';

/**
 * Per account and repository: the setup and test commands, variables for both phases, and
 * setup-only secrets. Keyed as repository memory is (repoKey of the normalised URL); another
 * account's settings are never read, so a repository the caller has none for is not_found.
 */

/** The AEAD context of a secret: the ciphertext only opens for this account, repository and name. */
export const secretContext = (workspaceId: string, repo: string, name: string) =>
  `repo-secret:${workspaceId}:${repoKey(repo)}:${name}`;

export interface SecretMeta {
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface RepoSettingsView {
  setupCommand: string | null;
  testCommand: string | null;
  env: Record<string, string>;
  /** The fixer attempts of the repository's fix tasks that name none; null: one. */
  attempts: number | null;
  secrets: SecretMeta[];
  updatedAt: Date;
}

export interface SettingsPatch {
  setup_command?: string | null;
  test_command?: string | null;
  /** Variables to set; a null value removes that variable. */
  env?: Record<string, string | null>;
  /** The default number of fixer attempts, within the workspace's plan; null clears it. */
  attempts?: number | null;
}

type Reader = Pick<Deps, 'db'>;

const settingsOf = (workspaceId: string, repo: string) =>
  and(eq(repoSettings.workspaceId, workspaceId), eq(repoSettings.repo, repoKey(repo)));
const secretsOf = (workspaceId: string, repo: string) =>
  and(eq(repoSecrets.workspaceId, workspaceId), eq(repoSecrets.repo, repoKey(repo)));

async function listSecretMeta(db: Deps['db'], workspaceId: string, repo: string): Promise<SecretMeta[]> {
  return db
    .select({ name: repoSecrets.name, createdAt: repoSecrets.createdAt, updatedAt: repoSecrets.updatedAt })
    .from(repoSecrets)
    .where(secretsOf(workspaceId, repo))
    .orderBy(asc(repoSecrets.name));
}

async function view(db: Deps['db'], workspaceId: string, repo: string): Promise<RepoSettingsView | null> {
  const [row] = await db.select().from(repoSettings).where(settingsOf(workspaceId, repo));
  const secrets = await listSecretMeta(db, workspaceId, repo);
  if (!row && secrets.length === 0) return null;
  const times = [row?.updatedAt, ...secrets.map((s) => s.updatedAt)].filter((d): d is Date => d !== undefined);
  return {
    setupCommand: row?.setupCommand ?? null,
    testCommand: row?.testCommand ?? null,
    // by name: jsonb keeps keys in its own order (shortest first)
    env: Object.fromEntries(Object.entries((row?.env as Record<string, string> | undefined) ?? {}).sort()),
    attempts: row?.attempts ?? null,
    secrets,
    updatedAt: new Date(Math.max(...times.map((d) => d.getTime()))),
  };
}

const noSettings = (repo: string) => new AppError('not_found', `no settings or secrets for ${repo}`);

/** The caller's settings for a repository (secrets as metadata only); not_found when there are none. */
export async function getRepoSettings(deps: Reader, workspaceId: string, repo: string): Promise<RepoSettingsView> {
  const found = await view(deps.db, workspaceId, repo);
  if (!found) throw noSettings(repo);
  return found;
}

/** The repositories the caller has settings or secrets for, by key. */
export async function listSettingsRepos(
  deps: Reader,
  workspaceId: string,
): Promise<Array<{ repo: string; updatedAt: Date; secretCount: number }>> {
  const settings = await deps.db
    .select({ repo: repoSettings.repo, updatedAt: repoSettings.updatedAt })
    .from(repoSettings)
    .where(eq(repoSettings.workspaceId, workspaceId));
  const secrets = await deps.db
    .select({ repo: repoSecrets.repo, updatedAt: repoSecrets.updatedAt })
    .from(repoSecrets)
    .where(eq(repoSecrets.workspaceId, workspaceId));
  const byRepo = new Map<string, { repo: string; updatedAt: Date; secretCount: number }>();
  const entry = (repo: string) => {
    const e = byRepo.get(repo) ?? { repo, updatedAt: new Date(0), secretCount: 0 };
    byRepo.set(repo, e);
    return e;
  };
  for (const s of settings) {
    const e = entry(s.repo);
    if (s.updatedAt > e.updatedAt) e.updatedAt = s.updatedAt;
  }
  for (const s of secrets) {
    const e = entry(s.repo);
    e.secretCount += 1;
    if (s.updatedAt > e.updatedAt) e.updatedAt = s.updatedAt;
  }
  return [...byRepo.values()].sort((a, b) => a.repo.localeCompare(b.repo));
}

/**
 * Sets what the patch names and keeps the rest: a null command clears it, a null variable
 * removes it. Settings left with nothing in them are deleted (secrets are apart).
 */
export async function updateRepoSettings(
  deps: Pick<Deps, 'db' | 'clock'>,
  workspaceId: string,
  repo: string,
  patch: SettingsPatch,
): Promise<RepoSettingsView> {
  const setup =
    patch.setup_command === undefined || patch.setup_command === null
      ? patch.setup_command
      : checkCommand('setup_command', patch.setup_command);
  const test =
    patch.test_command === undefined || patch.test_command === null
      ? patch.test_command
      : checkCommand('test_command', patch.test_command);
  for (const name of Object.keys(patch.env ?? {})) if (patch.env![name] !== null) checkEnvName(name);
  const key = repoKey(repo);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    // Writes for one workspace take turns on its row: the env merge is read and written alone.
    const workspace = await lockWorkspace(tx, workspaceId);
    // A default the workspace's plan does not allow is refused as the task's own number would be.
    if (patch.attempts !== undefined && patch.attempts !== null) {
      const name = billingPlanNameOf(workspace?.plan ?? 'free');
      checkAttemptsAllowed('attempts', patch.attempts, billingPlan(name), name);
    }
    const [row] = await tx.select().from(repoSettings).where(settingsOf(workspaceId, repo));
    const env: Record<string, string> = { ...((row?.env as Record<string, string> | undefined) ?? {}) };
    for (const [name, value] of Object.entries(patch.env ?? {})) {
      if (value === null) delete env[name];
      else env[name] = value;
    }
    checkEnv(env);
    const next = {
      setupCommand: setup === undefined ? (row?.setupCommand ?? null) : setup,
      testCommand: test === undefined ? (row?.testCommand ?? null) : test,
      env,
      attempts: patch.attempts === undefined ? (row?.attempts ?? null) : patch.attempts,
    };
    if (
      next.setupCommand === null &&
      next.testCommand === null &&
      next.attempts === null &&
      Object.keys(env).length === 0
    ) {
      await tx.delete(repoSettings).where(settingsOf(workspaceId, repo));
      return;
    }
    await tx
      .insert(repoSettings)
      .values({ workspaceId, repo: key, ...next, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({ target: [repoSettings.workspaceId, repoSettings.repo], set: { ...next, updatedAt: now } });
  });
  return (await view(deps.db, workspaceId, repo)) ?? { ...EMPTY, updatedAt: now };
}

const EMPTY = { setupCommand: null, testCommand: null, env: {}, attempts: null, secrets: [] };

/** The repository's default number of fixer attempts (its settings), or null when it has none. */
export async function repoAttemptsDefault(
  db: Deps['db'] | Tx,
  workspaceId: string,
  repo: string,
): Promise<number | null> {
  const [row] = await db
    .select({ attempts: repoSettings.attempts })
    .from(repoSettings)
    .where(settingsOf(workspaceId, repo));
  return row?.attempts ?? null;
}

/**
 * Deletes the repository's settings and secrets, `within` (its audit row) in the same transaction;
 * not_found (and nothing recorded) when there were none.
 */
export async function deleteRepoSettings(
  deps: Reader,
  workspaceId: string,
  repo: string,
  within?: Within,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const a = await tx.delete(repoSettings).where(settingsOf(workspaceId, repo)).returning({ r: repoSettings.repo });
    const b = await tx.delete(repoSecrets).where(secretsOf(workspaceId, repo)).returning({ n: repoSecrets.name });
    if (a.length + b.length === 0) throw noSettings(repo);
    await within?.(tx);
  });
}

/**
 * The repository's secrets: names and times, never a value. Like the settings, not_found when the
 * caller has neither settings nor secrets for it; settings without secrets list none.
 */
export async function listRepoSecrets(deps: Reader, workspaceId: string, repo: string): Promise<SecretMeta[]> {
  return (await getRepoSettings(deps, workspaceId, repo)).secrets;
}

/** Stores (or replaces) a setup-only secret, encrypted with a fresh nonce under its own context. */
export async function saveRepoSecret(
  deps: Pick<Deps, 'db' | 'clock' | 'secretKey'>,
  workspaceId: string,
  repo: string,
  name: string,
  value: string,
): Promise<SecretMeta & { created: boolean }> {
  checkName('name', name);
  checkSecretValue(value);
  const key = repoKey(repo);
  const now = deps.clock.now();
  const valueEnc = encryptSecret(deps.secretKey, value, secretContext(workspaceId, repo, name));
  return deps.db.transaction(async (tx) => {
    await lockWorkspace(tx, workspaceId);
    const existing = await tx.select({ name: repoSecrets.name }).from(repoSecrets).where(secretsOf(workspaceId, repo));
    const replacing = existing.some((s) => s.name === name);
    if (!replacing && existing.length >= SETTINGS_LIMITS.secretCount)
      throw new AppError('bad_request', `name: at most ${SETTINGS_LIMITS.secretCount} secrets per repository`);
    const [row] = await tx
      .insert(repoSecrets)
      .values({ workspaceId, repo: key, name, valueEnc, createdAt: now, updatedAt: now })
      .onConflictDoUpdate({
        target: [repoSecrets.workspaceId, repoSecrets.repo, repoSecrets.name],
        set: { valueEnc, updatedAt: now },
      })
      .returning({ name: repoSecrets.name, createdAt: repoSecrets.createdAt, updatedAt: repoSecrets.updatedAt });
    return { ...row!, created: !replacing };
  });
}

/** Deletes one secret; not_found when the caller has none of that name for the repository. */
export async function deleteRepoSecret(deps: Reader, workspaceId: string, repo: string, name: string): Promise<void> {
  const gone = await deps.db
    .delete(repoSecrets)
    .where(and(secretsOf(workspaceId, repo), eq(repoSecrets.name, name)))
    .returning({ name: repoSecrets.name });
  if (gone.length === 0) throw new AppError('not_found', `no secret ${name} for ${repo}`);
}

/** What the validator uses for a task's repository: commands, variables, and the secrets decrypted. */
export interface RepoRunSettings {
  setupCommand?: string;
  testCommand?: string;
  /** For the setup and the test phase. */
  env: Record<string, string>;
  /** For the setup phase only. */
  setupSecrets: Record<string, string>;
}

/**
 * The settings a task on `repoUrl` runs with, secrets decrypted (in the worker, for the run;
 * never stored elsewhere or logged). An account with none gets empty settings.
 */
export async function repoSettingsFor(
  deps: Pick<Deps, 'db' | 'secretKey'>,
  workspaceId: string,
  repoUrl: string,
): Promise<RepoRunSettings> {
  const [row] = await deps.db.select().from(repoSettings).where(settingsOf(workspaceId, repoUrl));
  const secrets = await deps.db
    .select({ name: repoSecrets.name, valueEnc: repoSecrets.valueEnc })
    .from(repoSecrets)
    .where(secretsOf(workspaceId, repoUrl));
  const setupSecrets: Record<string, string> = {};
  for (const s of secrets)
    setupSecrets[s.name] = decryptSecret(deps.secretKey, s.valueEnc, secretContext(workspaceId, repoUrl, s.name));
  return {
    ...(row?.setupCommand ? { setupCommand: row.setupCommand } : {}),
    ...(row?.testCommand ? { testCommand: row.testCommand } : {}),
    env: { ...((row?.env as Record<string, string> | undefined) ?? {}) },
    setupSecrets,
  };
}
