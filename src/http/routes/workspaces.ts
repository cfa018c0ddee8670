import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { AuthContext } from '../../accounts/authenticate.js';
import { signOutMember, switchSessionWorkspace } from '../../accounts/sessions.js';
import { WORKSPACE_ROLES } from '../../db/access-vocabulary.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import {
  INVITATION_DAYS,
  INVITATION_STATUSES,
  type InvitationView,
  acceptInvitation,
  createInvitation,
  listInvitations,
  revokeInvitation,
} from '../../workspaces/invitations.js';
import { exportWorkspace } from '../use-cases/workspace-export.js';
import { createWorkspace, renameWorkspace } from '../../workspaces/lifecycle.js';
import { deleteWorkspace } from '../use-cases/workspace-deletion.js';
import {
  type MemberView,
  leaveWorkspace,
  listMembers,
  removeOtherMember,
  setMemberRole,
  transferOwnership,
} from '../../workspaces/members.js';
import { type Workspace, membershipOf, membershipsOf } from '../../workspaces/workspaces.js';
import { caller, workspaceInPath } from '../auth.js';
import { errorResponses } from '../errors.js';
import { IdParams, Nullable, StringEnum, Timestamp, Uuid, described, isoOrNull } from '../schema-parts.js';
import { sessionSecretOf } from '../session-cookie.js';
import { announceDeliveries } from '../../webhooks/deliveries.js';
import { auditWithin, audited, recordIn } from '../audit.js';

// Workspaces (docs/teams.md): their wire shapes, presenters and routes.

const Role = StringEnum(WORKSPACE_ROLES);
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });

export const WorkspaceRecord = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    personal: Type.Boolean({ description: 'a personal workspace: made with its account, never shared' }),
    role: Role,
    plan: Type.String(),
    credits: Type.Integer(),
    created_at: Timestamp,
  },
  { $id: 'Workspace' },
);

export const MemberRecord = Type.Object(
  {
    account_id: Uuid(),
    email: Type.String({ format: 'email' }),
    name: Type.String(),
    role: Role,
    since: Timestamp,
  },
  { $id: 'WorkspaceMember' },
);

export const InvitationRecord = Type.Object(
  {
    id: Uuid(),
    role: Role,
    email: Nullable(Type.String({ description: 'whom it is meant for, as the inviter said' })),
    status: StringEnum(INVITATION_STATUSES, {
      description:
        'pending: it can still be accepted. revoked: by a maintainer or the owner, or because its inviter left, was removed or can no longer make it (an older invitation may show revoked with revoked_at null until it is next tried). accepted, expired: as their times say',
    }),
    invited_by: Nullable(Uuid({ description: 'the account that made it (null: that account is gone)' })),
    expires_at: Timestamp,
    accepted_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { $id: 'WorkspaceInvitation' },
);

export const workspaceSchemas = [WorkspaceRecord, MemberRecord, InvitationRecord];

const workspaceJson = (w: Workspace, role: string) => ({
  id: w.id,
  name: w.name,
  personal: w.personalOf !== null,
  role,
  plan: w.plan,
  credits: w.credits,
  created_at: w.createdAt.toISOString(),
});

const memberJson = (m: MemberView) => ({
  account_id: m.accountId,
  email: m.email,
  name: m.name,
  role: m.role,
  since: m.since.toISOString(),
});

const invitationJson = (i: InvitationView) => ({
  id: i.id,
  role: i.role,
  email: i.email,
  status: i.status,
  invited_by: i.invitedBy,
  expires_at: i.expiresAt.toISOString(),
  accepted_at: isoOrNull(i.acceptedAt),
  revoked_at: isoOrNull(i.revokedAt),
  created_at: i.createdAt.toISOString(),
});

const actor = (auth: AuthContext) => ({ role: auth.role, scopes: auth.scopes, accountId: auth.account.id });

const MemberParams = Type.Object({ id: Uuid(), account_id: Uuid() });
const InvitationParams = Type.Object({ id: Uuid(), invitation_id: Uuid() });

export const workspaceRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const full = { access: 'full' as const };

  app.get(
    '/workspaces',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'listWorkspaces',
        summary: 'The workspaces you belong to, your personal one first',
        response: { 200: described('your workspaces', Type.Array(Type.Ref('Workspace'))), ...errorResponses(401, 403) },
      },
    },
    async (request) =>
      (await membershipsOf(deps, caller(request).account.id)).map((m) => workspaceJson(m.workspace, m.role)),
  );

  app.post(
    '/workspaces',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'createWorkspace',
        summary: 'Create a team workspace; you are its owner',
        body: Type.Object({ name: Name }, { additionalProperties: false, examples: [{ name: 'Platform team' }] }),
        response: { 201: described('the workspace', Type.Ref('Workspace')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const workspace = await audited(
        deps,
        request,
        (d) => createWorkspace(d, caller(request).account.id, request.body.name.trim()),
        (w) => ({ action: 'workspace.created', workspaceId: w.id, detail: { name: w.name } }),
      );
      return reply.status(201).send(workspaceJson(workspace, 'owner'));
    },
  );

  app.get(
    '/workspaces/:id',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'getWorkspace',
        summary: 'The workspace this token acts in',
        params: IdParams,
        response: { 200: described('the workspace', Type.Ref('Workspace')), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const auth = caller(request);
      return workspaceJson(workspaceInPath(auth, request.params.id), auth.role);
    },
  );

  app.patch(
    '/workspaces/:id',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'renameWorkspace',
        summary: 'Rename the workspace (owner)',
        params: IdParams,
        body: Type.Object({ name: Name }, { additionalProperties: false, examples: [{ name: 'Platform' }] }),
        response: { 200: described('the workspace', Type.Ref('Workspace')), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const auth = caller(request);
      const workspace = workspaceInPath(auth, request.params.id);
      const name = request.body.name.trim();
      const renamed = await audited(deps, request, (d) => renameWorkspace(d, workspace.id, name), {
        action: 'workspace.renamed',
        detail: { from: workspace.name, to: name },
      });
      return workspaceJson(renamed, auth.role);
    },
  );

  app.delete(
    '/workspaces/:id',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'deleteWorkspace',
        summary: 'Delete a team workspace (owner): its tasks, members, keys and settings go; its credit ledger stays',
        params: IdParams,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      // Recorded in the transaction that marks it deleted; the hosts' webhooks are removed after.
      const audit = auditWithin(deps, request, { action: 'workspace.deleted' });
      await deleteWorkspace(deps, workspaceInPath(caller(request), request.params.id), audit.within);
      await audit.announce();
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/workspaces/:id/export',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'exportWorkspace',
        summary: 'Everything the workspace holds, without secrets (owner)',
        params: IdParams,
        response: {
          200: described(
            'the workspace, then one section per kind of row it holds (docs/teams.md): members, invitations, tasks, task feedback, repository settings (secret names only), memory, provider keys and code-host connections (metadata), webhooks and their deliveries, triggers and the credit ledger',
            Type.Object({}, { additionalProperties: true }),
          ),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) => {
      // An export changes nothing: its act is the reading. The rows are read in a transaction that
      // then appends the record, and nothing is answered unless that committed (docs/decisions.md).
      const workspace = workspaceInPath(caller(request), request.params.id);
      return audited(deps, request, (d) => exportWorkspace(d, workspace), { action: 'workspace.exported' });
    },
  );

  app.get(
    '/workspaces/:id/members',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'listMembers',
        summary: 'The workspace’s members, owner first',
        params: IdParams,
        response: {
          200: described('the members', Type.Array(Type.Ref('WorkspaceMember'))),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) =>
      (await listMembers(deps, workspaceInPath(caller(request), request.params.id).id)).map(memberJson),
  );

  app.patch(
    '/workspaces/:id/members/:account_id',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'setMemberRole',
        summary: 'Change a member’s role (maintainers: below owner; ownership moves by transfer)',
        params: MemberParams,
        body: Type.Object({ role: Role }, { additionalProperties: false, examples: [{ role: 'viewer' }] }),
        response: {
          200: described('the member', Type.Ref('WorkspaceMember')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      const workspace = workspaceInPath(auth, request.params.id);
      const { account_id: accountId } = request.params;
      const before = await membershipOf(deps.db, accountId, workspace.id);
      const member = await audited(
        deps,
        request,
        (d) => setMemberRole(d, actor(auth), workspace.id, accountId, request.body.role),
        {
          action: 'member.role_changed',
          targets: { account_id: accountId },
          detail: { from: before?.role ?? null, to: request.body.role },
        },
      );
      return memberJson(member);
    },
  );

  app.delete(
    '/workspaces/:id/members/:account_id',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'removeMember',
        summary: 'Remove a member below the owner; their tokens for this workspace are revoked',
        params: MemberParams,
        response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const workspace = workspaceInPath(auth, request.params.id);
      const { account_id: accountId } = request.params;
      await audited(deps, request, (d) => removeOtherMember(d, actor(auth), workspace.id, accountId), {
        action: 'member.removed',
        targets: { account_id: accountId },
      });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/workspaces/:id/members/:account_id/sign-out',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'signOutMember',
        summary:
          'End a member’s control-panel sessions in this workspace and revoke their tokens for it, at once (owner)',
        description:
          'Sessions and tokens the member has in other workspaces are untouched: those are their own and those owners’. The member stays a member; removing them is DELETE on the member.',
        params: MemberParams,
        response: {
          200: described(
            'what was ended',
            Type.Object({
              sessions_ended: Type.Integer({ minimum: 0 }),
              tokens_revoked: Type.Integer({ minimum: 0 }),
            }),
          ),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      const workspace = workspaceInPath(auth, request.params.id);
      if (!(await membershipOf(deps.db, request.params.account_id, workspace.id)))
        throw new AppError('not_found', `no member ${request.params.account_id} in workspace ${workspace.id}`);
      const { account_id: accountId } = request.params;
      const ended = await audited(
        deps,
        request,
        (d) => signOutMember(d, workspace.id, accountId),
        (e) => ({
          action: 'member.signed_out',
          targets: { account_id: accountId },
          detail: { sessions_ended: e.sessions, tokens_revoked: e.tokens },
        }),
      );
      return { sessions_ended: ended.sessions, tokens_revoked: ended.tokens };
    },
  );

  app.post(
    '/workspaces/:id/leave',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'leaveWorkspace',
        summary: 'Leave the workspace (not its owner); your tokens for it are revoked, this one too',
        params: IdParams,
        response: { 204: Type.Null({ description: 'left' }), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const workspaceId = workspaceInPath(auth, request.params.id).id;
      await audited(deps, request, (d) => leaveWorkspace(d, workspaceId, auth.account.id), {
        action: 'member.left',
        targets: { account_id: auth.account.id },
      });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/workspaces/:id/transfer',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'transferWorkspace',
        summary: 'Make another member the owner (owner); you stay, as a maintainer',
        params: IdParams,
        body: Type.Object(
          { account_id: Uuid({ description: 'the member who becomes the owner' }) },
          { additionalProperties: false, examples: [{ account_id: '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1e' }] },
        ),
        response: {
          200: described('the members after the transfer', Type.Array(Type.Ref('WorkspaceMember'))),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      const workspace = workspaceInPath(auth, request.params.id);
      const to = request.body.account_id;
      const members = await audited(deps, request, (d) => transferOwnership(d, workspace, auth.account.id, to), {
        action: 'workspace.transferred',
        targets: { account_id: to },
        detail: { from: auth.account.id },
      });
      return members.map(memberJson);
    },
  );

  app.post(
    '/workspaces/:id/invitations',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'createInvitation',
        summary: 'Invite someone: a one-time link that expires; accepting needs an account',
        params: IdParams,
        body: Type.Object(
          {
            role: Role,
            email: Type.Optional(
              Type.String({ format: 'email', maxLength: 254, description: 'whom it is for (a note)' }),
            ),
            expires_in_days: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: INVITATION_DAYS.max,
                description: `default ${INVITATION_DAYS.default}`,
              }),
            ),
          },
          { additionalProperties: false, examples: [{ role: 'member', email: 'dev@example.com' }] },
        ),
        response: {
          201: described(
            'the invitation, with its secret and link shown this once',
            Type.Intersect([
              Type.Ref('WorkspaceInvitation'),
              Type.Object({
                token: Type.String({ description: 'the one-time secret (POST /v1/invitations/accept)' }),
                url: Type.String({ description: 'the control panel’s page that accepts it' }),
              }),
            ]),
          ),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const auth = caller(request);
      const workspace = workspaceInPath(auth, request.params.id);
      const { invitation, secret } = await audited(
        deps,
        request,
        (d) =>
          createInvitation(d, actor(auth), workspace, {
            role: request.body.role,
            email: request.body.email,
            expiresInDays: request.body.expires_in_days,
          }),
        // The invitation's id and role, never its secret.
        ({ invitation }) => ({
          action: 'member.invited',
          targets: { invitation_id: invitation.id },
          detail: { role: invitation.role, email: invitation.email },
        }),
      );
      const url = `${deps.config.baseUrl.replace(/\/+$/, '')}/app/#/invitation/${secret}`;
      return reply.status(201).send({ ...invitationJson(invitation), token: secret, url });
    },
  );

  app.get(
    '/workspaces/:id/invitations',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'listInvitations',
        summary: 'The workspace’s invitations, newest first (no secrets)',
        params: IdParams,
        response: {
          200: described('the invitations', Type.Array(Type.Ref('WorkspaceInvitation'))),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) =>
      (await listInvitations(deps, workspaceInPath(caller(request), request.params.id).id)).map(invitationJson),
  );

  app.delete(
    '/workspaces/:id/invitations/:invitation_id',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'revokeInvitation',
        summary: 'Revoke an invitation not yet accepted',
        params: InvitationParams,
        response: {
          200: described('the invitation, revoked', Type.Ref('WorkspaceInvitation')),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) => {
      const workspace = workspaceInPath(caller(request), request.params.id);
      const { invitation_id: invitationId } = request.params;
      const revoked = await audited(deps, request, (d) => revokeInvitation(d, workspace.id, invitationId), {
        action: 'member.invitation_revoked',
        targets: { invitation_id: invitationId },
      });
      return invitationJson(revoked);
    },
  );

  app.post(
    '/invitations/accept',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'acceptInvitation',
        summary: 'Join a workspace with an invitation’s secret (once, before it expires)',
        body: Type.Object(
          { token: Type.String({ maxLength: 100 }) },
          { additionalProperties: false, examples: [{ token: 'inv_0123456789abcdefghijklmnopqrstuv' }] },
        ),
        response: {
          200: described('the workspace you joined, with your role', Type.Ref('Workspace')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      // Not audited(): a refused invitation is revoked then, and that must stay when the refusal throws.
      let deliveries: string[] = [];
      const joined = await acceptInvitation(deps, auth.account.id, request.body.token.trim(), async (tx, j) => {
        // In the workspace joined, with the role the invitation gave.
        deliveries = await recordIn(tx, deps, request, {
          action: 'member.joined',
          workspaceId: j.workspace.id,
          targets: { account_id: auth.account.id },
          detail: { role: j.role },
        });
      });
      await announceDeliveries(deps, deliveries);
      return workspaceJson(joined.workspace, joined.role);
    },
  );

  app.post(
    '/auth/session/workspace',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'switchWorkspace',
        summary: 'Point the control panel’s session at another of your workspaces',
        body: Type.Object(
          { workspace_id: Uuid() },
          { additionalProperties: false, examples: [{ workspace_id: '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1e' }] },
        ),
        response: {
          200: described('the workspace now acted in', Type.Ref('Workspace')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      const secret = sessionSecretOf(request);
      if (!secret || request.headers.authorization !== undefined)
        throw new AppError('bad_request', 'only a control-panel session switches workspaces; a token acts in its own');
      const member = await membershipOf(deps.db, auth.account.id, request.body.workspace_id);
      if (!member) throw new AppError('not_found', `no workspace ${request.body.workspace_id}`);
      await audited(deps, request, (d) => switchSessionWorkspace(d, secret, member.workspace.id), {
        action: 'session.switched',
        workspaceId: member.workspace.id,
        targets: { from_workspace_id: auth.workspace.id },
      });
      return workspaceJson(member.workspace, member.role);
    },
  );
};
