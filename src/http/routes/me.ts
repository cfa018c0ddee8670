import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { eq } from 'drizzle-orm';
import { listProviderKeys } from '../../accounts/provider-keys.js';
import { accounts } from '../../db/schema.js';
import { connectionsOf } from '../../accounts/scm-connection.js';
import type { Deps } from '../../deps.js';
import { caller } from '../auth.js';
import { providerKeyJson } from '../present.js';
import { errorResponses, described, StringEnum } from '../schemas.js';

export const meRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/me',
    {
      schema: {
        tags: ['account'],
        operationId: 'getProfile',
        summary: 'Your profile',
        response: { 200: described('your profile', Type.Ref('Profile')), ...errorResponses(401) },
      },
    },
    async (request) => {
      const { account, tokenKind } = caller(request);
      const hosts = await connectionsOf(deps, account.id);
      const first = hosts[0]!;
      return {
        id: account.id,
        email: account.email,
        name: account.name,
        plan: tokenKind === 'demo' ? 'demo' : account.plan,
        credits: account.credits,
        use_byok: account.useByok,
        approval_mode: account.approvalMode,
        scm: first.login,
        [first.host.kind.brand]: first.login,
        scm_hosts: hosts.map(({ host, login }) => ({
          host: host.id,
          kind: host.kind.kind,
          web_url: host.webUrl,
          login,
          oauth: !!host.oauth,
        })),
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
        operationId: 'setByok',
        summary: "Use your own provider keys (the provider bills you) or the service's",
        body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false, examples: [{ enabled: true }] }),
        response: {
          200: described('the BYOK setting as stored', Type.Object({ use_byok: Type.Boolean() })),
          ...errorResponses(400, 401, 403),
        },
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
        operationId: 'updateSettings',
        summary: 'Account settings: the default approval mode of new tasks',
        body: Type.Object(
          { approval_mode: StringEnum(['auto', 'manual'] as const) },
          { additionalProperties: false, examples: [{ approval_mode: 'manual' }] },
        ),
        response: {
          200: described('the settings as stored', Type.Object({ approval_mode: Type.String() })),
          ...errorResponses(400, 401, 403),
        },
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
