/** The events an endpoint can subscribe to (docs/webhooks.md). */
export const WEBHOOK_EVENTS = [
  'task.done',
  'task.failed',
  'task.cancelled',
  'task.awaiting_approval',
  'pr.merged',
  'spend.threshold',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The `ping` that POST /v1/me/webhooks/{id}/test sends; not subscribable. */
export const PING_EVENT = 'ping';
