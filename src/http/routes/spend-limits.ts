import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { WORKSPACE_ROLES } from '../../db/access-vocabulary.js';
import type { Deps } from '../../deps.js';
import { noticeSpend } from '../../tasks/spend-notices.js';
import { type SpendLimits, setSpendLimits, spendLimitsOf } from '../../workspaces/spend-limits.js';
import { audited } from '../audit.js';
import { caller, workspaceInPath } from '../auth.js';
import { errorResponses } from '../errors.js';
import { IdParams, Nullable, StringEnum, Usd, Uuid, described } from '../schema-parts.js';

// Spend limits (docs/teams.md, "Spend limits"): a workspace's and its members' monthly caps on
// model spend and credits, with what each has used this UTC calendar month.

const UsdCap = (description: string) =>
  Nullable(Type.Number({ minimum: 0, maximum: 1_000_000_000, description: `${description}; null: no cap` }));
const CreditCap = (description: string) =>
  Nullable(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: `${description}; null: no cap` }));
const CAP_NAMES = ['monthly_spend_cap_usd', 'monthly_credit_cap'] as const;

export const SpendLimitsRecord = Type.Object(
  {
    month: Type.String({ description: 'the UTC calendar month counted, as YYYY-MM', examples: ['2026-11'] }),
    monthly_spend_cap_usd: UsdCap('the most metered model spend (USD) the workspace’s tasks may reach in a month'),
    spent_usd: Usd({ description: 'metered model spend of the workspace’s managed tasks this month' }),
    monthly_credit_cap: CreditCap('the most credits the workspace’s tasks may hold in a month'),
    credits_used: Type.Integer({ minimum: 0, description: 'credits held this month and not given back' }),
    members: Type.Array(
      Type.Object({
        account_id: Uuid(),
        email: Type.String({ format: 'email' }),
        name: Type.String(),
        role: StringEnum(WORKSPACE_ROLES),
        monthly_spend_cap_usd: UsdCap('this member’s own monthly cap on their tasks’ model spend'),
        spent_usd: Usd({ description: 'their tasks’ metered model spend this month' }),
        monthly_credit_cap: CreditCap('this member’s own monthly cap on the credits their tasks hold'),
        credits_used: Type.Integer({ minimum: 0 }),
      }),
    ),
    notices: Type.Array(
      Type.Object({
        scope: StringEnum(['workspace', 'member'] as const),
        account_id: Nullable(Uuid({ description: 'the member, for a member’s cap' })),
        cap: StringEnum(CAP_NAMES),
        threshold: Type.Integer({ description: '80 or 100: the share of the cap reached, in percent' }),
        limit: Type.Number(),
        used: Type.Number(),
        message: Type.String(),
      }),
      { description: 'every cap at 80 % or more of its limit this month (the panel shows them)' },
    ),
  },
  { $id: 'SpendLimits' },
);

export const spendLimitSchemas = [SpendLimitsRecord];

const CapsBody = {
  monthly_spend_cap_usd: Type.Optional(UsdCap('US dollars, at most two decimals')),
  monthly_credit_cap: Type.Optional(CreditCap('credits')),
};

const LimitsBody = Type.Object(
  {
    ...CapsBody,
    members: Type.Optional(
      Type.Array(Type.Object({ account_id: Uuid(), ...CapsBody }, { additionalProperties: false }), {
        maxItems: 1000,
        description: 'members’ own caps; a member left out keeps theirs',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ monthly_spend_cap_usd: 50, monthly_credit_cap: 100 }],
    description: 'a field left out stays as it is; null removes the cap',
  },
);

const limitsJson = (l: SpendLimits) => ({
  month: l.month,
  monthly_spend_cap_usd: l.caps.usd,
  spent_usd: round6(l.used.usd),
  monthly_credit_cap: l.caps.credits,
  credits_used: l.used.credits,
  members: l.members.map((m) => ({
    account_id: m.accountId,
    email: m.email,
    name: m.name,
    role: m.role,
    monthly_spend_cap_usd: m.caps.usd,
    spent_usd: round6(m.used.usd),
    monthly_credit_cap: m.caps.credits,
    credits_used: m.used.credits,
  })),
  notices: l.notices.map((n) => ({
    scope: n.scope,
    account_id: n.accountId,
    cap: n.cap === 'usd' ? ('monthly_spend_cap_usd' as const) : ('monthly_credit_cap' as const),
    threshold: n.threshold,
    limit: n.limit,
    used: round6(n.used),
    message: n.message,
  })),
});

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

export const spendLimitRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const full = { access: 'full' as const };

  app.get(
    '/workspaces/:id/limits',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'getSpendLimits',
        summary: 'The workspace’s and its members’ monthly spend caps, with what is used this month',
        params: IdParams,
        response: { 200: described('caps and use', Type.Ref('SpendLimits')), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => limitsJson(await spendLimitsOf(deps, workspaceInPath(caller(request), request.params.id).id)),
  );

  app.patch(
    '/workspaces/:id/limits',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'setSpendLimits',
        summary: 'Set the workspace’s and members’ monthly spend caps (owner)',
        params: IdParams,
        body: LimitsBody,
        response: { 200: described('caps and use', Type.Ref('SpendLimits')), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const id = workspaceInPath(caller(request), request.params.id).id;
      await audited(deps, request, (d) => setSpendLimits(d, id, request.body), {
        action: 'limits.changed',
        detail: { ...request.body },
      });
      // A cap lowered under what is used is told now, not at the next spend.
      await noticeSpend(deps, id, null);
      for (const m of request.body.members ?? []) await noticeSpend(deps, id, m.account_id);
      return limitsJson(await spendLimitsOf(deps, id));
    },
  );
};
