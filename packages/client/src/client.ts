/**
 * createClient: openapi-fetch typed by the generated `paths`, with the token, the retry policy
 * (src/retry.ts), an Idempotency-Key on every create, and calls that answer the body or throw
 * an EmendError (src/errors.ts).
 */
import createFetchClient, {
  type Client,
  type ClientPathsWithMethod,
  type MaybeOptionalInit,
  type MethodResponse,
} from 'openapi-fetch';
import { errorFromResponse, networkError } from './errors.js';
import { type FollowOptions, type TaskEvent, followTask } from './follow.js';
import { DEFAULT_RETRY, type Sleep, realSleep, retryingFetch } from './retry.js';
import type {
  AuditEvent,
  AuditQuery,
  CreateInvitationBody,
  CreateTaskBody,
  CreateTokenBody,
  CreatedInvitation,
  CreatedToken,
  ListTasksQuery,
  Log,
  SetSpendLimitsBody,
  SpendLimits,
  Task,
  TaskSummary,
  Workspace,
  WorkspaceExport,
  WorkspaceInvitation,
  WorkspaceMember,
  WorkspaceRole,
  paths,
} from './types.js';

export type FetchFn = (input: Request, init?: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** The server's origin, e.g. https://emend.example.com (the paths carry /v1). */
  baseUrl: string;
  /** A personal access token (tk_…) or a demo token; sent as a Bearer token. */
  token?: string;
  /** The fetch to use (default: the global one), e.g. one with a proxy or a custom agent. */
  fetch?: FetchFn;
  /** How many times a call is repeated after a 429 or, when idempotent, a network error (default 3). */
  retries?: number;
  /** The longest Retry-After worth waiting for, in ms (default 60 000); a longer one throws RateLimitError. */
  maxRetryWaitMs?: number;
  /** How the client waits between attempts (default: setTimeout); tests pass their own clock. */
  sleep?: Sleep;
}

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';
type Media = `${string}/${string}`;
type RawClient = Client<paths, Media>;
type RequiredKeysOf<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? never : K }[keyof T];
/** openapi-fetch's rule: the options argument is optional exactly when nothing in it is required. */
type InitParam<Init> =
  RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** A typed call that resolves to the success body and throws an EmendError for anything else. */
export type Call<M extends HttpMethod> = <
  P extends ClientPathsWithMethod<RawClient, M>,
  I extends MaybeOptionalInit<paths[P], M>,
>(
  url: P,
  ...init: InitParam<I>
) => Promise<MethodResponse<RawClient, M, P, I>>;

export interface EmendClient {
  GET: Call<'get'>;
  POST: Call<'post'>;
  PUT: Call<'put'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
  /** openapi-fetch itself ({data, error, response}, nothing thrown for error answers), with the same retries. */
  raw: Client<paths, Media>;
  /** POST /v1/tasks with an Idempotency-Key (yours, or a new one), so a repeat after a lost answer creates one task. */
  createTask(body: CreateTaskBody, options?: { idempotencyKey?: string; signal?: AbortSignal }): Promise<Task>;
  getTask(id: string, options?: { signal?: AbortSignal }): Promise<{ task: Task; logs: Log[] }>;
  /** The task's events, live, to its `end` (see followTask in follow.ts). */
  followTask(id: string, options?: FollowOptions): AsyncGenerator<TaskEvent, void, undefined>;
  /** One page of the workspace's tasks, newest first; `created_by` (an account id) for one person's. */
  listTasks(query?: ListTasksQuery, options?: CallOptions): Promise<TaskSummary[]>;
  /** A personal access token for one of your workspaces (`workspace_id`), with `scopes` narrower than your role. */
  createToken(body?: CreateTokenBody, options?: CallOptions): Promise<CreatedToken>;

  // Workspaces (docs/teams.md). A token acts in its own workspace: the calls that take a
  // workspace id answer NotFoundError for any other (mint a token for it with createToken).

  /** The workspaces you belong to, your personal one first, each with your role. */
  listWorkspaces(options?: CallOptions): Promise<Workspace[]>;
  /** A new team workspace; you are its owner. */
  createWorkspace(name: string, options?: CallOptions): Promise<Workspace>;
  getWorkspace(id: string, options?: CallOptions): Promise<Workspace>;
  /** Owner only. */
  renameWorkspace(id: string, name: string, options?: CallOptions): Promise<Workspace>;
  /** Owner only, a team workspace whose tasks have all finished; the credit ledger is kept. */
  deleteWorkspace(id: string, options?: CallOptions): Promise<void>;
  /** Owner only: everything the workspace holds, without secrets. */
  exportWorkspace(id: string, options?: CallOptions): Promise<WorkspaceExport>;
  /**
   * Owner and maintainers: a page of the workspace's audit log, newest first, filtered; the next
   * page starts below the last row's `seq` (`cursor`).
   */
  listAudit(id: string, query?: AuditQuery, options?: CallOptions): Promise<AuditEvent[]>;
  /** The members, owner first. */
  listMembers(id: string, options?: CallOptions): Promise<WorkspaceMember[]>;
  /** The monthly spend caps (the workspace's, each member's) with what is used this month (docs/teams.md). */
  getSpendLimits(id: string, options?: CallOptions): Promise<SpendLimits>;
  /** Owner only: sets caps; a field left out stays, null removes one. */
  setSpendLimits(id: string, body: SetSpendLimitsBody, options?: CallOptions): Promise<SpendLimits>;
  /** Maintainers change roles below owner; ownership moves with transferWorkspace. */
  setMemberRole(id: string, accountId: string, role: WorkspaceRole, options?: CallOptions): Promise<WorkspaceMember>;
  /** Removes a member below the owner and revokes their tokens for the workspace. */
  removeMember(id: string, accountId: string, options?: CallOptions): Promise<void>;
  /** Leave (not as its owner); your tokens for it are revoked, the calling one too. */
  leaveWorkspace(id: string, options?: CallOptions): Promise<void>;
  /** Owner only: makes another member the owner, you stay as a maintainer; the members after it. */
  transferWorkspace(id: string, accountId: string, options?: CallOptions): Promise<WorkspaceMember[]>;
  /** A one-time invitation that expires; its secret (`token`) and link (`url`) are shown this once. */
  createInvitation(id: string, body: CreateInvitationBody, options?: CallOptions): Promise<CreatedInvitation>;
  /** The workspace's invitations, newest first, without secrets. */
  listInvitations(id: string, options?: CallOptions): Promise<WorkspaceInvitation[]>;
  revokeInvitation(id: string, invitationId: string, options?: CallOptions): Promise<WorkspaceInvitation>;
  /** Joins the workspace an invitation's secret (`inv_…`) is for; the workspace, with your role. */
  acceptInvitation(token: string, options?: CallOptions): Promise<Workspace>;
}

/** What every named call takes besides its arguments. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** The routes that take an Idempotency-Key: the client sends a fresh one when the caller gave none. */
export const KEYED_ROUTES: readonly string[] = ['/v1/tasks', '/v1/tasks/{id}/continue'];

async function settle<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: Awaited<typeof call>;
  try {
    result = await call;
  } catch (err) {
    throw networkError(err);
  }
  if (!result.response.ok) throw errorFromResponse(result.response, result.error);
  // A 204 (a deletion, leaving a workspace) resolves to undefined.
  return result.data as T;
}

/** What openapi-fetch's methods are at run time, before their generic types. */
type LooseMethod = (url: string, init?: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

function unwrapped<M extends HttpMethod>(method: RawClient[Uppercase<M>]): Call<M> {
  // The generic signatures of openapi-fetch and of Call describe the same call; TypeScript cannot relate them.
  const loose = method as unknown as LooseMethod;
  return ((url: string, init?: object) => settle(loose(url, init))) as Call<M>;
}

const inWorkspace = (id: string) => ({ params: { path: { id } } });

export function createClient(options: ClientOptions): EmendClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const baseFetch: FetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const sleep = options.sleep ?? realSleep;
  const auth: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  const raw = createFetchClient<paths, Media>({
    baseUrl,
    headers: { accept: 'application/json', ...auth },
    fetch: retryingFetch(baseFetch, {
      retries: options.retries ?? DEFAULT_RETRY.retries,
      maxWaitMs: options.maxRetryWaitMs ?? DEFAULT_RETRY.maxWaitMs,
      baseDelayMs: DEFAULT_RETRY.baseDelayMs,
      sleep,
    }),
  });
  raw.use({
    onRequest({ request, schemaPath }) {
      if (request.method === 'POST' && KEYED_ROUTES.includes(schemaPath) && !request.headers.has('idempotency-key'))
        request.headers.set('idempotency-key', crypto.randomUUID());
    },
  });
  const client: EmendClient = {
    GET: unwrapped(raw.GET),
    POST: unwrapped(raw.POST),
    PUT: unwrapped(raw.PUT),
    PATCH: unwrapped(raw.PATCH),
    DELETE: unwrapped(raw.DELETE),
    raw,
    createTask: (body, { idempotencyKey = crypto.randomUUID(), signal } = {}) =>
      client.POST('/v1/tasks', { body, params: { header: { 'idempotency-key': idempotencyKey } }, signal }),
    getTask: (id, { signal } = {}) => client.GET('/v1/tasks/{id}', { params: { path: { id } }, signal }),
    followTask: (id, follow = {}) => followTask({ baseUrl, fetch: baseFetch, headers: auth, sleep }, id, follow),
    listTasks: (query = {}, { signal } = {}) => client.GET('/v1/tasks', { params: { query }, signal }),
    createToken: (body = {}, { signal } = {}) => client.POST('/v1/me/tokens', { body, signal }),
    listWorkspaces: ({ signal } = {}) => client.GET('/v1/workspaces', { signal }),
    createWorkspace: (name, { signal } = {}) => client.POST('/v1/workspaces', { body: { name }, signal }),
    getWorkspace: (id, { signal } = {}) => client.GET('/v1/workspaces/{id}', { ...inWorkspace(id), signal }),
    renameWorkspace: (id, name, { signal } = {}) =>
      client.PATCH('/v1/workspaces/{id}', { ...inWorkspace(id), body: { name }, signal }),
    deleteWorkspace: async (id, { signal } = {}) => {
      await client.DELETE('/v1/workspaces/{id}', { ...inWorkspace(id), signal });
    },
    exportWorkspace: (id, { signal } = {}) => client.GET('/v1/workspaces/{id}/export', { ...inWorkspace(id), signal }),
    listAudit: (id, query = {}, { signal } = {}) =>
      client.GET('/v1/workspaces/{id}/audit', { params: { path: { id }, query }, signal }),
    listMembers: (id, { signal } = {}) => client.GET('/v1/workspaces/{id}/members', { ...inWorkspace(id), signal }),
    getSpendLimits: (id, { signal } = {}) => client.GET('/v1/workspaces/{id}/limits', { ...inWorkspace(id), signal }),
    setSpendLimits: (id, body, { signal } = {}) =>
      client.PATCH('/v1/workspaces/{id}/limits', { ...inWorkspace(id), body, signal }),
    setMemberRole: (id, account_id, role, { signal } = {}) =>
      client.PATCH('/v1/workspaces/{id}/members/{account_id}', {
        params: { path: { id, account_id } },
        body: { role },
        signal,
      }),
    removeMember: async (id, account_id, { signal } = {}) => {
      await client.DELETE('/v1/workspaces/{id}/members/{account_id}', { params: { path: { id, account_id } }, signal });
    },
    leaveWorkspace: async (id, { signal } = {}) => {
      await client.POST('/v1/workspaces/{id}/leave', { ...inWorkspace(id), signal });
    },
    transferWorkspace: (id, account_id, { signal } = {}) =>
      client.POST('/v1/workspaces/{id}/transfer', { ...inWorkspace(id), body: { account_id }, signal }),
    createInvitation: (id, body, { signal } = {}) =>
      client.POST('/v1/workspaces/{id}/invitations', { ...inWorkspace(id), body, signal }),
    listInvitations: (id, { signal } = {}) =>
      client.GET('/v1/workspaces/{id}/invitations', { ...inWorkspace(id), signal }),
    revokeInvitation: (id, invitation_id, { signal } = {}) =>
      client.DELETE('/v1/workspaces/{id}/invitations/{invitation_id}', {
        params: { path: { id, invitation_id } },
        signal,
      }),
    acceptInvitation: (token, { signal } = {}) => client.POST('/v1/invitations/accept', { body: { token }, signal }),
  };
  return client;
}
