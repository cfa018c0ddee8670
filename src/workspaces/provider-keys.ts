import { and, eq } from 'drizzle-orm';
import { providerKeys } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { LlmProvider } from '../config/llm.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { encryptSecret } from '../secrets/box.js';

export const keyContext = (workspaceId: string, provider: string) => `provider-key:${workspaceId}:${provider}`;

export interface SaveKeyInput {
  provider: LlmProvider;
  api_key: string;
  base_url?: string;
  default_model?: string;
  /** The model's context window in tokens, when it is not a known one (a local model). */
  context_window?: number;
}

export function checkBaseUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AppError('bad_request', 'base_url: not a URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new AppError('bad_request', 'base_url: must be http or https');
  if (u.username || u.password) throw new AppError('bad_request', 'base_url: credentials do not belong in the URL');
  return raw.replace(/\/+$/, '');
}

/**
 * Stores (or replaces) the account's key for a provider, encrypted with a fresh nonce. A
 * base_url must pass the outbound address policy now (its address, or what its name resolves
 * to); each call through it is checked again on the address it connects to.
 */
export async function saveProviderKey(
  deps: Pick<Deps, 'db' | 'clock' | 'secretKey' | 'outbound'>,
  workspaceId: string,
  input: SaveKeyInput,
) {
  const key = input.api_key.trim();
  if (key.length < 8) throw new AppError('bad_request', 'api_key: too short to be a provider key');
  const baseUrl = checkBaseUrl(input.base_url);
  if (baseUrl) await deps.outbound.check('base_url', baseUrl);
  const values = {
    keyEnc: encryptSecret(deps.secretKey, key, keyContext(workspaceId, input.provider)),
    last4: key.slice(-4),
    baseUrl,
    defaultModel: input.default_model ?? null,
    contextWindow: input.context_window ?? null,
    createdAt: deps.clock.now(),
  };
  const [row] = await deps.db
    .insert(providerKeys)
    .values({ id: newId(), workspaceId, provider: input.provider, ...values })
    .onConflictDoUpdate({ target: [providerKeys.workspaceId, providerKeys.provider], set: values })
    .returning();
  return row!;
}

export async function listProviderKeys(deps: Pick<Deps, 'db'>, workspaceId: string) {
  return deps.db
    .select()
    .from(providerKeys)
    .where(eq(providerKeys.workspaceId, workspaceId))
    .orderBy(providerKeys.provider);
}

export async function deleteProviderKey(deps: Pick<Deps, 'db'>, workspaceId: string, provider: string) {
  const gone = await deps.db
    .delete(providerKeys)
    .where(and(eq(providerKeys.workspaceId, workspaceId), eq(providerKeys.provider, provider)))
    .returning({ id: providerKeys.id });
  if (gone.length === 0) throw new AppError('not_found', `no saved key for ${provider}`);
}
