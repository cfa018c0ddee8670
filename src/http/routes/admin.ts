import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { desc, eq, isNotNull, isNull } from 'drizzle-orm';
import { updateAccount } from '../../accounts/accounts.js';
import { ASSIGNABLE_BILLING_PLANS, BILLING_PLAN_NAMES } from '../../config/billing-plans.js';
import { accounts, workspaces } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { announceDeliveries } from '../../webhooks/deliveries.js';
import { audited, recordIn } from '../audit.js';
import { errorResponses } from '../errors.js';
import { IdParams, Nullable, StringEnum, Timestamp, Uuid, described, isoOrNull } from '../schema-parts.js';
import type { AccountView } from '../../accounts/accounts.js';
import { AppError } from '../../errors.js';
import { applyPlanChange, checkPlanChange } from '../../billing/plan-change.js';
import { type Workspace, lockWorkspace } from '../../workspaces/workspaces.js';

// The admin's account resource: its wire shape (AdminAccount) and its presenter.

export const AdminAccount = Type.Object(
  {
    id: Uuid(),
    email: Type.String({ format: 'email' }),
    name: Type.String(),
    plan: StringEnum(BILLING_PLAN_NAMES),
    credits: Type.Integer(),
    use_byok: Type.Boolean(),
    is_admin: Type.Boolean(),
    created_at: Timestamp,
  },
  { $id: 'AdminAccount' },
);

/** An account as the operator sees it (AdminAccount): plan, credits and BYOK are its personal workspace's. */
export function adminAccountJson({ account: a, workspace: w }: AccountView) {
  return {
    id: a.id,
    email: a.email,
    name: a.name,
    plan: w.plan,
    credits: w.credits,
    use_byok: w.useByok,
    is_admin: a.isAdmin,
    created_at: a.createdAt.toISOString(),
  };
}

export const AdminWorkspace = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    personal_of: Nullable(Uuid({ description: 'the account whose personal workspace it is; null for a team’s' })),
    plan: StringEnum(BILLING_PLAN_NAMES),
    credits: Type.Integer(),
    use_byok: Type.Boolean(),
    created_at: Timestamp,
    deleted_at: Nullable(Timestamp),
  },
  { $id: 'AdminWorkspace' },
);

/** A workspace as the operator sees it (AdminWorkspace). */
export function adminWorkspaceJson(w: Workspace) {
  return {
    id: w.id,
    name: w.name,
    personal_of: w.personalOf,
    plan: w.plan,
    credits: w.credits,
    use_byok: w.useByok,
    created_at: w.createdAt.toISOString(),
    deleted_at: isoOrNull(w.deletedAt),
  };
}

/** This resource's named schemas, for src/http/components.ts. */
export const adminSchemas = [AdminAccount, AdminWorkspace];

export const adminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/admin/accounts',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        operationId: 'listAccounts',
        summary: 'Accounts, newest first (admins only)',
        querystring: Type.Object(
          {
            email: Type.Optional(Type.String({ maxLength: 254 })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: described('the accounts, newest first', Type.Array(Type.Ref('AdminAccount'))),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { email, limit } = request.query;
      const rows = await deps.db
        .select({ account: accounts, workspace: workspaces })
        .from(accounts)
        .innerJoin(workspaces, eq(workspaces.personalOf, accounts.id))
        .where(email ? eq(accounts.email, email.trim().toLowerCase()) : undefined)
        .orderBy(desc(accounts.createdAt))
        .limit(limit ?? 100);
      return rows.map(adminAccountJson);
    },
  );

  app.patch(
    '/admin/accounts/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        operationId: 'updateAccount',
        summary: "Change an account's plan or set its credits (admins only)",
        params: IdParams,
        body: Type.Object(
          {
            plan: Type.Optional(StringEnum(ASSIGNABLE_BILLING_PLANS)),
            credits: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
            is_admin: Type.Optional(Type.Boolean()),
          },
          {
            additionalProperties: false,
            examples: [{ plan: 'pro', credits: 50 }],
            description: 'every field optional; {} (or no body) changes nothing and answers the account',
          },
        ),
        response: {
          200: described('the account as changed', Type.Ref('AdminAccount')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { plan, credits, is_admin } = request.body;
      // In the account's personal workspace's log (its id is the account's): an operator's change,
      // recorded in the transaction that makes it.
      const changed = await audited(
        deps,
        request,
        (d) => updateAccount(d, request.params.id, { plan, credits, isAdmin: is_admin }),
        {
          action: 'admin.account_changed',
          workspaceId: request.params.id,
          targets: { account_id: request.params.id },
          detail: { plan, credits, is_admin },
        },
      );
      return adminAccountJson(changed);
    },
  );

  app.get(
    '/admin/workspaces',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        operationId: 'listAllWorkspaces',
        summary: 'Workspaces, newest first (admins only)',
        querystring: Type.Object(
          {
            team: Type.Optional(StringEnum(['true', 'false'] as const, { description: 'true: team workspaces only' })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: described('the workspaces, newest first', Type.Array(Type.Ref('AdminWorkspace'))),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { team, limit } = request.query;
      const rows = await deps.db
        .select()
        .from(workspaces)
        .where(
          team === undefined
            ? undefined
            : team === 'true'
              ? isNull(workspaces.personalOf)
              : isNotNull(workspaces.personalOf),
        )
        .orderBy(desc(workspaces.createdAt), desc(workspaces.id))
        .limit(limit ?? 100);
      return rows.map(adminWorkspaceJson);
    },
  );

  app.patch(
    '/admin/workspaces/:id',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        operationId: 'updateWorkspacePlan',
        summary: "Change a workspace's plan or set its credits (admins only)",
        params: IdParams,
        body: Type.Object(
          {
            plan: Type.Optional(StringEnum(ASSIGNABLE_BILLING_PLANS)),
            credits: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
          },
          {
            additionalProperties: false,
            examples: [{ plan: 'scale', credits: 500 }],
            description: 'every field optional; {} (or no body) changes nothing and answers the workspace',
          },
        ),
        response: {
          200: described('the workspace as changed', Type.Ref('AdminWorkspace')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const change = request.body ?? {};
      checkPlanChange(change);
      const now = deps.clock.now();
      let deliveries: string[] = [];
      const updated = await deps.db.transaction(async (tx) => {
        const current = await lockWorkspace(tx, request.params.id);
        if (!current || current.deletedAt) throw new AppError('not_found', `no workspace ${request.params.id}`);
        const changed = await applyPlanChange(tx, current, change, now);
        deliveries = await recordIn(tx, deps, request, {
          action: 'admin.workspace_changed',
          workspaceId: request.params.id,
          detail: { ...change },
        });
        return changed;
      });
      await announceDeliveries(deps, deliveries);
      return adminWorkspaceJson(updated);
    },
  );
};
