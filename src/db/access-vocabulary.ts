/**
 * The words of workspace access as the database stores them: members' roles and tokens' scopes.
 * What each allows is src/workspaces/access.ts.
 */

/** Highest first: each role may do all that the ones below it may. */
export const WORKSPACE_ROLES = ['owner', 'maintainer', 'member', 'viewer'] as const;
export type WorkspaceRole = (typeof WORKSPACE_ROLES)[number];

/**
 * What a token may be narrowed to. A token with no scopes may do all its owner's role allows (as
 * the contract says of a `tk_` token); one with scopes, only those, and never more than the role.
 */
export const TOKEN_SCOPES = [
  'tasks:read',
  'tasks:write',
  'settings:read',
  'settings:write',
  'keys',
  'members',
  'workspace',
] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
