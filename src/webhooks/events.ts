/** The events an endpoint can subscribe to (docs/webhooks.md). */
export const WEBHOOK_EVENTS = [
  'task.done',
  'task.failed',
  'task.cancelled',
  'task.awaiting_approval',
  'pr.merged',
  'spend.threshold',
  /** Every row of the workspace's audit log, as `audit.<action>` (`audit.token.minted`…): docs/security.md. */
  'audit.*',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The type a delivery carries: a subscribable event, or one of the `audit.*` family. */
export type DeliveredEvent = Exclude<WebhookEvent, 'audit.*'> | `audit.${string}`;

/** The subscription an event type is delivered under (`audit.token.minted`: `audit.*`). */
export const subscriptionOf = (type: DeliveredEvent): WebhookEvent =>
  type.startsWith('audit.') ? 'audit.*' : (type as WebhookEvent);

/** The `ping` that POST /v1/me/webhooks/{id}/test sends; not subscribable. */
export const PING_EVENT = 'ping';
