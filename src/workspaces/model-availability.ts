import { eq } from 'drizzle-orm';
import { hasManagedModelKey } from '../config/exposure.js';
import { providerKeys } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';

/**
 * Refuses a task that could not call any model, before it is created or counted (issue 45): every
 * task type and fixer starts with the planner's model call, so "a model is available" is the rule
 * chooseModel (model-credentials.ts) applies to each step — a BYOK task needs a key saved in its
 * workspace, any other (demo tokens included) a managed key of the operator's. Whether that key
 * works is the provider's to say, at the first call.
 */
export async function requireModelFor(
  deps: Pick<Deps, 'db' | 'config'>,
  task: { workspaceId: string; byok: boolean },
): Promise<void> {
  if (task.byok) {
    const [saved] = await deps.db
      .select({ provider: providerKeys.provider })
      .from(providerKeys)
      .where(eq(providerKeys.workspaceId, task.workspaceId))
      .limit(1);
    if (saved) return;
    throw new AppError(
      'model_not_configured',
      'no model provider key: this workspace uses its own keys (BYOK) and has none saved; add one under ' +
        'Account → Provider keys (POST /v1/me/keys), or turn BYOK off to use the server’s key',
    );
  }
  if (hasManagedModelKey(deps.config)) return;
  throw new AppError(
    'model_not_configured',
    'no model provider key: the server has none (the operator sets OPENAI_API_KEY, ANTHROPIC_API_KEY or ' +
      'GOOGLE_GENERATIVE_AI_API_KEY); save your own under Account → Provider keys (POST /v1/me/keys) and turn BYOK on',
  );
}
