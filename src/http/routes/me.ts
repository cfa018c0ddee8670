import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { eq } from 'drizzle-orm';
import { listProviderKeys } from '../../accounts/provider-keys.js';
import { accounts } from '../../db/schema.js';
import { SCM_BRAND } from '../../scm/github.js';
import type { Deps } from '../../deps.js';
import { caller } from '../auth.js';
import { providerKeyJson } from '../present.js';
import { errorResponses } from '../schemas.js';

export const meRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/me',
    {
      schema: {
        tags: ['account'],
        summary: 'Your profile',
        response: { 200: Type.Ref('Profile'), ...errorResponses(401) },
      },
    },
    async (request) => {
      const { account, tokenKind } = caller(request);
      return {
        id: account.id,
        email: account.email,
        name: account.name,
        plan: tokenKind === 'demo' ? 'demo' : account.plan,
        credits: account.credits,
        use_byok: account.useByok,
        approval_mode: account.approvalMode,
        scm: account.scmLogin,
        [SCM_BRAND]: account.scmLogin,
        api_keys: (await listProviderKeys(deps, account.id)).map(providerKeyJson),
        is_admin: account.isAdmin,
        created_at: account.createdAt.toISOString(),
      };
    },
  );

  app.post(
    '/me/byok',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        summary: "Use your own provider keys (the provider bills you) or the service's",
        body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: Type.Object({ use_byok: Type.Boolean() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const [row] = await deps.db
        .update(accounts)
        .set({ useByok: request.body.enabled })
        .where(eq(accounts.id, caller(request).account.id))
        .returning({ useByok: accounts.useByok });
      return { use_byok: row!.useByok };
    },
  );

  app.post(
    '/me/settings',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        summary: 'Account settings: the default approval mode of new tasks',
        body: Type.Object(
          { approval_mode: Type.Union([Type.Literal('auto'), Type.Literal('manual')]) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ approval_mode: Type.String() }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const [row] = await deps.db
        .update(accounts)
        .set({ approvalMode: request.body.approval_mode })
        .where(eq(accounts.id, caller(request).account.id))
        .returning({ approvalMode: accounts.approvalMode });
      return { approval_mode: row!.approvalMode };
    },
  );
};
