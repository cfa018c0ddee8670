/**
 * What the audit log records (docs/security.md, "Audit log"): one name per security-relevant
 * event. A refused act (403 from the gate) is recorded under the gate's act instead
 * (src/workspaces/access.ts ACTS), with decision `denied`.
 */
export const AUDIT_ACTIONS = [
  'session.signed_in',
  'session.signed_out',
  'session.ended',
  'token.minted',
  'token.revoked',
  'key.added',
  'key.removed',
  'member.invited',
  'member.invitation_revoked',
  'member.joined',
  'member.left',
  'member.removed',
  'member.role_changed',
  'member.signed_out',
  'workspace.created',
  'workspace.renamed',
  'workspace.deleted',
  'workspace.transferred',
  'workspace.exported',
  'settings.changed',
  'settings.removed',
  'secret.set',
  'secret.removed',
  'triggers.changed',
  'triggers.removed',
  'webhook.created',
  'webhook.changed',
  'webhook.removed',
  'sso.set',
  'sso.removed',
  'limits.changed',
  'scm.connected',
  'scm.disconnected',
  'task.created',
  'task.approved',
  'task.continued',
  'task.killed',
  'task.deleted',
  'audit.exported',
  /** A summary row: what retention folded (src/audit/retention.ts). */
  'audit.summarised',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];
