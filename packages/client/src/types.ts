/** Named types of the API, taken from the generated document types so they cannot drift from the server. */
import type { components, paths } from './schema.js';

type Schemas = components['schemas'];

export type { components, paths };
export type Task = Schemas['Task'];
export type TaskSummary = Schemas['TaskSummary'];
export type Log = Schemas['Log'];
export type Profile = Schemas['Profile'];
export type TaskStatus = Task['status'];
/** The codes of the API's Error body (`error`). */
export type ErrorCode = Schemas['Error']['error'];
/** The body of every error answer. */
export type ErrorBody = Schemas['Error'];
/** The body of POST /v1/tasks. */
export type CreateTaskBody = NonNullable<paths['/v1/tasks']['post']['requestBody']>['content']['application/json'];
/** The data of a `state` event of the task stream. */
export type TaskStateEvent = Schemas['TaskStateEvent'];
/** The data of a `log` event of the task stream. */
export type TaskLogEvent = Schemas['TaskLogEvent'];
/** The statuses a task ends in; the stream's `end` event carries one. */
export type TerminalStatus = Extract<TaskStatus, 'done' | 'failed' | 'cancelled'>;
/** The query of GET /v1/tasks (filters, `limit`, `cursor`; `created_by` for one person's tasks). */
export type ListTasksQuery = NonNullable<paths['/v1/tasks']['get']['parameters']['query']>;
/** A workspace as its member sees it: with their role, plan and credits (docs/teams.md). */
export type Workspace = Schemas['Workspace'];
export type WorkspaceRole = Workspace['role'];
export type WorkspaceMember = Schemas['WorkspaceMember'];
export type WorkspaceInvitation = Schemas['WorkspaceInvitation'];
/** The body of POST /v1/workspaces/{id}/invitations. */
export type CreateInvitationBody = NonNullable<
  paths['/v1/workspaces/{id}/invitations']['post']['requestBody']
>['content']['application/json'];
/** A new invitation, with its one-time secret (`token`) and the panel's link (`url`), shown once. */
export type CreatedInvitation =
  paths['/v1/workspaces/{id}/invitations']['post']['responses'][201]['content']['application/json'];
/** A workspace's and its members' monthly spend caps with the month's use, and notices at 80 % or more. */
export type SpendLimits = Schemas['SpendLimits'];
/** The body of PATCH /v1/workspaces/{id}/limits: a field left out stays, null removes the cap. */
export type SetSpendLimitsBody = NonNullable<
  paths['/v1/workspaces/{id}/limits']['patch']['requestBody']
>['content']['application/json'];
/** What GET /v1/workspaces/{id}/export answers: the workspace and all it holds, without secrets. */
export type WorkspaceExport =
  paths['/v1/workspaces/{id}/export']['get']['responses'][200]['content']['application/json'];
/** A row of a workspace's audit log (docs/security.md, "The audit log"). */
export type AuditEvent = Schemas['AuditEvent'];
/** The filters and page of GET /v1/workspaces/{id}/audit. */
export type AuditQuery = NonNullable<paths['/v1/workspaces/{id}/audit']['get']['parameters']['query']>;
export type TokenRecord = Schemas['TokenRecord'];
export type TokenScope = NonNullable<TokenRecord['scopes']>[number];
/** The body of POST /v1/me/tokens: a name, an expiry, the workspace it acts in and its scopes. */
export type CreateTokenBody = NonNullable<paths['/v1/me/tokens']['post']['requestBody']>['content']['application/json'];
/** A new token, with its secret (`token`) shown once. */
export type CreatedToken = paths['/v1/me/tokens']['post']['responses'][201]['content']['application/json'];
/** The fixer step's output (its finished log record): the change, and with several attempts each of them and the choice. */
export type FixerOutput = Schemas['FixerOutput'];
/** One of a fix task's attempts (docs/agent.md, "Attempts"): its fixer, verdict, size, whole diff and cost. */
export type FixAttempt = NonNullable<FixerOutput['attempts']>[number];
/** Which attempt a fix task kept, and why (the ranking's deciding criterion, in words). */
export type AttemptChoice = NonNullable<FixerOutput['choice']>;
