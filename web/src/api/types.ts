/** The API's shapes and vocabularies, named from the types generated from the OpenAPI document. */
import type { components } from './schema';

type Schemas = components['schemas'];

export type Task = Schemas['Task'];
export type TaskSummary = Schemas['TaskSummary'];
export type Profile = Schemas['Profile'];
export type TokenRecord = Schemas['TokenRecord'];
export type Workspace = Schemas['Workspace'];
export type WorkspaceMember = Schemas['WorkspaceMember'];
export type SpendLimits = Schemas['SpendLimits'];
export type WorkspaceInvitation = Schemas['WorkspaceInvitation'];
export type WorkspaceRole = Profile['role'];
export type TokenScope = NonNullable<TokenRecord['scopes']>[number];
/**
 * What a token may be narrowed to (none: all its owner's role allows), as the API names them: a
 * record over the generated type, so a scope the document adds or drops fails to compile here.
 */
const SCOPES: Record<TokenScope, true> = {
  'tasks:read': true,
  'tasks:write': true,
  'settings:read': true,
  'settings:write': true,
  keys: true,
  members: true,
  workspace: true,
};
export const TOKEN_SCOPES = Object.keys(SCOPES) as TokenScope[];
export type ProviderKey = Schemas['ProviderKey'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type TaskLogEvent = Schemas['TaskLogEvent'];
/** A step log record as the live stream sends it (`log` events), with its row id from the `id:` line. */
export type LogRecord = TaskLogEvent & { id: number };
export type TaskStateEvent = Schemas['TaskStateEvent'];

/** Each step's output in a fix task, as the step contract publishes it in the document. */
export interface FixOutputs {
  planner: Schemas['PlannerOutput'];
  locator: Schemas['LocatorOutput'];
  inspector: Schemas['InspectorOutput'];
  fixer: Schemas['FixerOutput'];
  validator: Schemas['ValidatorOutput'];
  pr: Schemas['PrOutput'];
}

/** Each step's output in a scaffold task (no locator, inspector or pull request). */
export interface SiteOutputs {
  planner: Schemas['SitePlannerOutput'];
  fixer: Schemas['SiteFixerOutput'];
  validator: Schemas['SiteValidatorOutput'];
}

export type TaskStatus = Task['status'];
export type TaskType = Task['task_type'];
export type StepName = LogRecord['step'];
export type LogStatus = LogRecord['status'];
export type ErrorCode = Schemas['Error']['error'];

/** The roles from the highest down (docs/teams.md): each may do what those below it may. */
export const ROLES = ['owner', 'maintainer', 'member', 'viewer'] as const satisfies readonly WorkspaceRole[];
/** Whether `role` is `atLeast` or above. */
export const roleAtLeast = (role: WorkspaceRole, atLeast: WorkspaceRole) =>
  ROLES.indexOf(role) <= ROLES.indexOf(atLeast);

/** The statuses a task ends in (the stream closes there). */
export const TERMINAL = ['done', 'failed', 'cancelled'] as const satisfies readonly TaskStatus[];
export const isTerminal = (status: TaskStatus) => (TERMINAL as readonly TaskStatus[]).includes(status);
