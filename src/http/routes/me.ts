import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { eq } from 'drizzle-orm';
import { listProviderKeys } from '../../workspaces/provider-keys.js';
import { workspaces } from '../../db/schema.js';
import { WORKSPACE_ROLES } from '../../db/access-vocabulary.js';
import { connectionsOf } from '../../workspaces/scm-connection.js';
import type { AuthContext } from '../../accounts/authenticate.js';
import type { Deps } from '../../deps.js';
import { may } from '../../workspaces/access.js';
import { caller } from '../auth.js';
import { providerKeyJson } from './keys.js';
import { ApprovalMode, Fixer } from './tasks.js';
import { billingPlan, billingPlanNameOf } from '../../billing/billing-plan.js';
import { checkFixerAllowed } from '../../workspaces/fixer-choice.js';
import { errorResponses } from '../errors.js';
import { Nullable, StringEnum, Timestamp, Uuid, described } from '../schema-parts.js';
import { BILLING_PLAN_NAMES } from '../../config/billing-plans.js';
import { SCM_KINDS } from '../../config/scm-hosts.js';
import type { Config } from '../../config/config.js';
import { baseUrlIsLocal, managedProviders } from '../../config/exposure.js';
import { LLM_PROVIDERS } from '../../config/llm.js';
import { audited } from '../audit.js';

// The profile's wire shape (Profile) and its presenter.

export const Profile = Type.Object(
  {
    id: Uuid(),
    email: Type.String({ format: 'email' }),
    name: Type.String(),
    plan: StringEnum(BILLING_PLAN_NAMES),
    credits: Type.Integer(),
    use_byok: Type.Boolean(),
    approval_mode: ApprovalMode,
    fixer: Nullable(
      Fixer('the fixer of your fix tasks that name none (POST /v1/me/settings); null: the server’s default'),
    ),
    scm: Nullable(Type.String({ description: 'login on the default (first) code host; null when not connected' })),
    ...Object.fromEntries(
      SCM_KINDS.map((brand) => [
        brand,
        Type.Optional(
          Nullable(
            Type.String({
              description: `the same login under the default host's brand name, present when that host is ${brand}; always equal to scm`,
            }),
          ),
        ),
      ]),
    ),
    scm_hosts: Type.Array(
      Type.Object({
        host: Type.String({ description: 'the host’s id: POST /v1/me/scm `host`' }),
        kind: StringEnum(SCM_KINDS),
        web_url: Type.String({ format: 'uri' }),
        login: Nullable(Type.String({ description: 'your login there; null when not connected' })),
        oauth: Type.Boolean({ description: 'the host can be connected (and signed in with) through OAuth' }),
        app: Type.Optional(
          Type.String({
            description:
              'the slug of the host’s GitHub App, when it has one: install it with GET /v1/apps/{host}/install',
          }),
        ),
      }),
      { description: 'every code host of this server, the default first' },
    ),
    api_keys: Type.Array(Type.Ref('ProviderKey'), {
      description: 'the workspace’s saved keys (metadata); empty for a viewer or a token without settings:read',
    }),
    is_admin: Type.Boolean(),
    created_at: Timestamp,
    workspace: Type.Object(
      {
        id: Uuid(),
        name: Type.String(),
        personal: Type.Boolean({ description: 'your personal workspace (made with your account)' }),
      },
      {
        description:
          'the workspace this request acts in (the token’s, or the one the panel switched to): plan, credits, use_byok, approval_mode, fixer, scm and api_keys are its',
      },
    ),
    role: StringEnum(WORKSPACE_ROLES, { description: 'your role in that workspace (docs/teams.md)' }),
    server: Type.Object(
      {
        managed_providers: Type.Array(StringEnum(LLM_PROVIDERS), {
          description:
            'the model providers the operator set a key for (managed mode); empty: a task runs only with your own key (BYOK)',
        }),
        base_url: Type.String({
          format: 'uri',
          description: 'the public address links are made from (EMEND_BASE_URL)',
        }),
        base_url_local: Type.Boolean({
          description:
            'base_url names this machine (localhost): invitation links and trigger hook URLs made from it work only there',
        }),
        demo_tokens: Type.Boolean({ description: 'POST /v1/demo/token issues demo tokens (EMEND_DEMO_TOKENS)' }),
      },
      { description: 'how the operator set this server up, as far as it concerns you' },
    ),
  },
  { $id: 'Profile' },
);

/**
 * The caller's profile (Profile): the account, and the workspace its token acts in as it sees it
 * (a demo token's plan reads demo), that workspace's code hosts with its login on each, the
 * default first, and its saved keys; the caller's role there.
 */
export function profileJson(
  { account, workspace, role, tokenKind }: Pick<AuthContext, 'account' | 'workspace' | 'role' | 'tokenKind'>,
  hosts: Awaited<ReturnType<typeof connectionsOf>>,
  keys: Awaited<ReturnType<typeof listProviderKeys>>,
  config: Config,
) {
  const first = hosts[0]!;
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    plan: tokenKind === 'demo' ? 'demo' : workspace.plan,
    credits: workspace.credits,
    use_byok: workspace.useByok,
    approval_mode: workspace.approvalMode,
    fixer: workspace.fixer,
    scm: first.login,
    [first.host.kind.brand]: first.login,
    scm_hosts: hosts.map(({ host, login }) => ({
      host: host.id,
      kind: host.kind.kind,
      web_url: host.webUrl,
      login,
      oauth: !!host.oauth,
      ...(host.app ? { app: host.app.slug } : {}),
    })),
    api_keys: keys.map(providerKeyJson),
    is_admin: account.isAdmin,
    created_at: account.createdAt.toISOString(),
    workspace: { id: workspace.id, name: workspace.name, personal: workspace.personalOf === account.id },
    role,
    server: {
      managed_providers: managedProviders(config),
      base_url: config.baseUrl,
      base_url_local: baseUrlIsLocal(config),
      demo_tokens: config.demoTokens,
    },
  };
}

/** This resource's named schemas, for src/http/components.ts. */
export const profileSchemas = [Profile];

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
      const auth = caller(request);
      return profileJson(
        auth,
        await connectionsOf(deps, auth.workspace.id),
        // The keys' metadata is the workspace's settings: shown to whom GET /v1/me/keys answers.
        may(auth, 'settings:read') ? await listProviderKeys(deps, auth.workspace.id) : [],
        deps.config,
      );
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
      const [row] = await audited(
        deps,
        request,
        (d) =>
          d.db
            .update(workspaces)
            .set({ useByok: request.body.enabled })
            .where(eq(workspaces.id, caller(request).workspace.id))
            .returning({ useByok: workspaces.useByok }),
        { action: 'settings.changed', detail: { use_byok: request.body.enabled } },
      );
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
        summary: 'Workspace settings: the default approval mode and fixer of new tasks',
        description:
          'Fields left out stay as they are (an empty body answers the settings). `fixer` null clears it (the server’s default then applies); a fixer ' +
          'your plan does not offer is a 400. A saved fixer your plan stops offering (a downgrade) reads as pipeline.',
        body: Type.Object(
          {
            approval_mode: Type.Optional(StringEnum(['auto', 'manual'] as const)),
            fixer: Type.Optional(
              Nullable(Fixer('the fixer of your fix tasks that name none (docs/agent.md); null: the server’s default')),
            ),
          },
          {
            additionalProperties: false,
            examples: [{ approval_mode: 'manual' }, { fixer: 'agent' }, { fixer: null }],
          },
        ),
        response: {
          200: described(
            'the settings as stored',
            Type.Object({ approval_mode: Type.String(), fixer: Nullable(Fixer('your default fixer')) }),
          ),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { workspace } = caller(request);
      const { approval_mode, fixer } = request.body;
      const billingPlanName = billingPlanNameOf(workspace.plan);
      if (fixer) checkFixerAllowed('fixer', fixer, billingPlan(billingPlanName), billingPlanName);
      const change = {
        ...(approval_mode !== undefined ? { approvalMode: approval_mode } : {}),
        ...(fixer !== undefined ? { fixer } : {}),
      };
      const columns = { approvalMode: workspaces.approvalMode, fixer: workspaces.fixer };
      const [row] =
        Object.keys(change).length === 0
          ? await deps.db.select(columns).from(workspaces).where(eq(workspaces.id, workspace.id))
          : await audited(
              deps,
              request,
              (d) => d.db.update(workspaces).set(change).where(eq(workspaces.id, workspace.id)).returning(columns),
              { action: 'settings.changed', detail: { approval_mode, fixer } },
            );
      return { approval_mode: row!.approvalMode, fixer: row!.fixer };
    },
  );
};
