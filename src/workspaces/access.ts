import { type TokenScope, WORKSPACE_ROLES, type WorkspaceRole } from '../db/access-vocabulary.js';
import { AppError } from '../errors.js';

/** The scope requirement no scoped token meets: the act is for unscoped (full) tokens only. */
export const UNSCOPED = 'unscoped';

/**
 * What a request does in its workspace, as src/http/route-acts.ts names it for each route, and the lowest
 * role and the token scope it needs. The one table of who may do what (docs/teams.md prints it).
 */
export const ACTS = {
  /** Reading tasks, their logs and streams, the profile and the workspace itself. */
  read: { role: 'viewer', scope: 'tasks:read', means: 'read tasks, logs, streams and the workspace' },
  /** Reading one's own: the profile, one's tokens (no secrets), one's workspaces. */
  self: { role: 'viewer', scope: null, means: 'read one’s own profile, tokens and workspaces' },
  /**
   * Changing one's own: minting and revoking tokens, making a workspace, joining, leaving,
   * switching the panel. Unscoped tokens only: a narrowed token must not mint a wider one.
   */
  account: {
    role: 'viewer',
    scope: UNSCOPED,
    means: 'mint and revoke one’s tokens, make, join and leave workspaces',
  },
  tasks: {
    role: 'member',
    scope: 'tasks:write',
    means: 'create, continue, approve, cancel and delete tasks; feedback',
  },
  'settings:read': {
    role: 'member',
    scope: 'settings:read',
    means: 'read repository settings, webhooks, triggers, keys (metadata), connections',
  },
  settings: {
    role: 'maintainer',
    scope: 'settings:write',
    means: 'change repository settings and secrets, webhooks, triggers, defaults, BYOK',
  },
  keys: { role: 'maintainer', scope: 'keys', means: 'save, test and remove provider keys' },
  members: { role: 'maintainer', scope: 'members', means: 'invite, remove and change members below owner' },
  /** The audit log: who did what in the workspace (docs/security.md). Read with a settings-reading token. */
  audit: { role: 'maintainer', scope: 'settings:read', means: 'read and export the workspace’s audit log' },
  owner: { role: 'owner', scope: 'workspace', means: 'plan, code-host connections, ownership, deletion and export' },
} as const satisfies Record<string, { role: WorkspaceRole; scope: TokenScope | typeof UNSCOPED | null; means: string }>;

export type Act = keyof typeof ACTS;

/** 0 for owner, up to 3 for viewer. */
const rank = (role: WorkspaceRole) => WORKSPACE_ROLES.indexOf(role);

/** Whether `role` is `atLeast` or above. */
export function roleAtLeast(role: WorkspaceRole, atLeast: WorkspaceRole): boolean {
  return rank(role) <= rank(atLeast);
}

/** Who acts: their role in the workspace and their token's scopes (null: all the role allows). */
export interface Actor {
  role: WorkspaceRole;
  scopes: readonly TokenScope[] | null;
}

/** Whether a token's scopes meet an act's need (a token without scopes meets every one). */
function scopesMeet(scopes: readonly TokenScope[] | null, need: TokenScope | typeof UNSCOPED | null): boolean {
  if (need === null || scopes === null) return true;
  return need !== UNSCOPED && scopes.includes(need);
}

/** Whether the actor may do the act (the role, then the token's scopes). */
export function may(actor: Actor, act: Act): boolean {
  const need = ACTS[act];
  return roleAtLeast(actor.role, need.role) && scopesMeet(actor.scopes, need.scope);
}

/**
 * The one gate of every act above reading one's own: a request whose role or token does not
 * allow it is 403 `forbidden`, naming what is missing. The HTTP gate (src/http/auth.ts) records a
 * refusal in the audit log; the acts done record themselves, in their own transaction.
 */
export function authorize(actor: Actor, act: Act): void {
  const need = ACTS[act];
  if (!roleAtLeast(actor.role, need.role))
    throw new AppError(
      'forbidden',
      `this needs the ${need.role} role in the workspace (yours: ${actor.role}) to ${need.means}`,
    );
  if (!scopesMeet(actor.scopes, need.scope))
    throw new AppError(
      'forbidden',
      need.scope === UNSCOPED
        ? `this needs a token without scopes, to ${need.means} (this one has: ${actor.scopes?.join(', ')})`
        : `this token lacks the ${need.scope} scope (it has: ${actor.scopes?.join(', ') || 'none'})`,
    );
}

/**
 * The scopes a new token may carry: those asked (all when none are) and never beyond the token
 * minting it. A token with scopes cannot mint one without.
 */
export function scopesForNewToken(minter: readonly TokenScope[] | null, asked: readonly TokenScope[] | undefined) {
  if (minter === null) return asked?.length ? [...new Set(asked)] : null;
  const wanted = asked?.length ? asked : minter;
  const beyond = wanted.filter((s) => !minter.includes(s));
  if (beyond.length) throw new AppError('forbidden', `a token cannot grant scopes it lacks: ${beyond.join(', ')}`);
  return [...new Set(wanted)];
}
