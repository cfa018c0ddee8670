import { type Env, integer, onOff, read } from './env.js';

export interface WebhookConfig {
  /** Whether endpoint URLs may be plain http (EMEND_WEBHOOK_ALLOW_HTTP=on); https otherwise. */
  allowHttp: boolean;
  /** One attempt's limit, connection to last byte of the answer. */
  timeoutMs: number;
  /** How long a delivery is retried after its first attempt. */
  retryForMs: number;
  /** The first retry's wait; each later one waits four times longer (at most 6 h), with ±20 % jitter. */
  retryBaseMs: number;
  /** An endpoint failing every attempt for this long is disabled. */
  disableAfterMs: number;
  /** How long a delivery's payload is kept for redelivery. */
  keepPayloadMs: number;
}

/** Webhook delivery (docs/webhooks.md). */
export const webhookConfig = (env: Env): WebhookConfig => ({
  allowHttp: read(env, 'EMEND_WEBHOOK_ALLOW_HTTP', onOff, false),
  timeoutMs: read(env, 'EMEND_WEBHOOK_TIMEOUT_MS', integer(100, 60_000), 10_000),
  retryForMs: read(env, 'EMEND_WEBHOOK_RETRY_HOURS', integer(1, 72), 24) * 3_600_000,
  retryBaseMs: read(env, 'EMEND_WEBHOOK_RETRY_BASE_MS', integer(10, 600_000), 5_000),
  disableAfterMs: read(env, 'EMEND_WEBHOOK_DISABLE_DAYS', integer(1, 30), 3) * 86_400_000,
  keepPayloadMs: 7 * 86_400_000,
});
