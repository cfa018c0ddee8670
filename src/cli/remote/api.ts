import { type EmendClient, createClient } from '@emend/client';
import type {
  CreateInvitationBody,
  CreateTokenBody,
  SetSpendLimitsBody,
  TaskStatus,
  WorkspaceRole,
} from '@emend/client';
import type { RemoteLogin } from './config.js';
import type { WebhookEvent } from '../../webhooks/events.js';

export type Provider = 'openai' | 'anthropic' | 'google';
export const PROVIDERS: readonly Provider[] = ['openai', 'anthropic', 'google'];

/**
 * The calls the remote commands make, each one call of @emend/client: its typed paths, its typed
 * errors (EmendError with the server's code, message and request id), its retries and its stream.
 */
export function connect(login: RemoteLogin) {
  const client: EmendClient = createClient({ baseUrl: login.server, token: login.token });
  const path = (id: string) => ({ params: { path: { id } } });
  return {
    me: () => client.GET('/v1/me'),
    createTask: client.createTask,
    listTasks: (query: TaskFilter) => client.listTasks(query),
    getTask: (id: string) => client.getTask(id),
    /** The task as the approval left it. */
    approve: async (id: string, stage: 'plan' | 'diff') =>
      (await client.POST('/v1/tasks/{id}/approve', { ...path(id), body: { stage } })).task,
    /** The task as the kill left it. */
    kill: async (id: string) => (await client.POST('/v1/tasks/{id}/kill', path(id))).task,
    continueTask: (id: string) => client.POST('/v1/tasks/{id}/continue', path(id)),
    feedback: (id: string, body: Feedback) => client.POST('/v1/tasks/{id}/feedback', { ...path(id), body }),
    deleteTask: (id: string) => client.DELETE('/v1/tasks/{id}', path(id)),
    follow: (id: string) => client.followTask(id),
    listKeys: () => client.GET('/v1/me/keys'),
    saveKey: (body: SaveKey) => client.POST('/v1/me/keys', { body }),
    testKey: (body: { provider: Provider; api_key: string }) => client.POST('/v1/me/keys/test', { body }),
    deleteKey: (provider: Provider) => client.DELETE('/v1/me/keys/{provider}', { params: { path: { provider } } }),
    listTokens: () => client.GET('/v1/me/tokens'),
    createToken: (body: CreateTokenBody) => client.createToken(body),
    revokeToken: (id: string) => client.DELETE('/v1/me/tokens/{id}', path(id)),
    listRepoSettings: () => client.GET('/v1/me/repos'),
    getRepoSettings: (repo: string) => client.GET('/v1/me/repos/settings', { params: { query: { repo } } }),
    updateRepoSettings: (repo: string, body: RepoSettingsPatch) =>
      client.PATCH('/v1/me/repos/settings', { params: { query: { repo } }, body }),
    deleteRepoSettings: (repo: string) => client.DELETE('/v1/me/repos/settings', { params: { query: { repo } } }),
    listRepoSecrets: (repo: string) => client.GET('/v1/me/repos/secrets', { params: { query: { repo } } }),
    saveRepoSecret: (repo: string, body: { name: string; value: string }) =>
      client.POST('/v1/me/repos/secrets', { params: { query: { repo } }, body }),
    deleteRepoSecret: (repo: string, name: string) =>
      client.DELETE('/v1/me/repos/secrets/{name}', { params: { path: { name }, query: { repo } } }),
    connectScm: (body: { token: string; host?: string }) => client.POST('/v1/me/scm', { body }),
    disconnectScm: (host?: string) => client.DELETE('/v1/me/scm', { params: { query: host ? { host } : {} } }),
    startScmOAuth: (host?: string) => client.GET('/v1/auth/scm/start', { params: { query: host ? { host } : {} } }),
    confirmScmOAuth: (confirmation: string) => client.POST('/v1/auth/scm/confirm', { body: { confirmation } }),
    getTriggers: (repo: string) => client.GET('/v1/me/repos/triggers', { params: { query: { repo } } }),
    enableTriggers: (repo: string, body: TriggerChange) =>
      client.PUT('/v1/me/repos/triggers', { params: { query: { repo } }, body }),
    disableTriggers: (repo: string) => client.DELETE('/v1/me/repos/triggers', { params: { query: { repo } } }),
    updateSettings: (body: SettingsChange) => client.POST('/v1/me/settings', { body }),
    listWebhooks: () => client.GET('/v1/me/webhooks'),
    addWebhook: (body: NewWebhook) => client.POST('/v1/me/webhooks', { body }),
    changeWebhook: (id: string, body: { enabled?: boolean; events?: WebhookEvent[]; url?: string }) =>
      client.PATCH('/v1/me/webhooks/{id}', { ...path(id), body }),
    removeWebhook: (id: string) => client.DELETE('/v1/me/webhooks/{id}', path(id)),
    testWebhook: (id: string) => client.POST('/v1/me/webhooks/{id}/test', path(id)),
    webhookDeliveries: (id: string) => client.GET('/v1/me/webhooks/{id}/deliveries', path(id)),
    redeliver: (id: string, delivery_id: string) =>
      client.POST('/v1/me/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
        params: { path: { id, delivery_id } },
      }),
    listWorkspaces: () => client.listWorkspaces(),
    createWorkspace: (name: string) => client.createWorkspace(name),
    getWorkspace: (id: string) => client.getWorkspace(id),
    renameWorkspace: (id: string, name: string) => client.renameWorkspace(id, name),
    deleteWorkspace: (id: string) => client.deleteWorkspace(id),
    exportWorkspace: (id: string) => client.exportWorkspace(id),
    getSpendLimits: (id: string) => client.getSpendLimits(id),
    setSpendLimits: (id: string, body: SetSpendLimitsBody) => client.setSpendLimits(id, body),
    listMembers: (id: string) => client.listMembers(id),
    setMemberRole: (id: string, accountId: string, role: WorkspaceRole) => client.setMemberRole(id, accountId, role),
    removeMember: (id: string, accountId: string) => client.removeMember(id, accountId),
    leaveWorkspace: (id: string) => client.leaveWorkspace(id),
    transferWorkspace: (id: string, accountId: string) => client.transferWorkspace(id, accountId),
    createInvitation: (id: string, body: CreateInvitationBody) => client.createInvitation(id, body),
    listInvitations: (id: string) => client.listInvitations(id),
    revokeInvitation: (id: string, invitationId: string) => client.revokeInvitation(id, invitationId),
    acceptInvitation: (token: string) => client.acceptInvitation(token),
  };
}

export type RemoteApi = ReturnType<typeof connect>;

/** PATCH /v1/me/repos/settings: fields left out stay; null clears (a variable: removes it). */
export interface RepoSettingsPatch {
  setup_command?: string | null;
  test_command?: string | null;
  env?: Record<string, string | null>;
  attempts?: number | null;
}

export type TriggerEvent = 'comments' | 'labels' | 'reviews';
export const TRIGGER_EVENT_NAMES: readonly TriggerEvent[] = ['comments', 'labels', 'reviews'];

/** Automatic CI follow-ups per pull request at most (the server's MAX_CI_ROUNDS). */
export const MAX_CI_ROUNDS = 2;

/** PUT /v1/me/repos/triggers: fields left out keep their value (or take the default). */
export interface TriggerChange {
  mention?: string;
  label?: string;
  events?: TriggerEvent[];
  /** 0 (off) to MAX_CI_ROUNDS. */
  ci_rounds?: number;
}

/** POST /v1/me/settings: the workspace's defaults for new tasks; a field left out stays. */
export interface SettingsChange {
  approval_mode?: 'auto' | 'manual';
  fixer?: 'pipeline' | 'agent' | null;
}

export interface NewWebhook {
  url: string;
  events: WebhookEvent[];
  description?: string;
}

export interface Feedback {
  rating?: number;
  correct?: 'yes' | 'partial' | 'no';
  reuse?: 'yes' | 'no';
  note?: string;
}

export interface SaveKey {
  provider: Provider;
  api_key: string;
  base_url?: string;
  default_model?: string;
}

/** The filters of GET /v1/tasks the CLI offers (the first page only: up to `limit`, default 100). */
export interface TaskFilter {
  status?: TaskStatus;
  repo_url?: string;
  /** one person's tasks (an account id); the workspace's otherwise */
  created_by?: string;
  limit?: number;
}
