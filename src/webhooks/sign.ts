import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` and
 * base64 of its key bytes; a message's signature is `v1,` and base64 of HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`. Receivers verify with any of the spec's libraries.
 */
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 24 random bytes, as the reference libraries make them. */
export const newSigningSecret = () => `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;

const keyOf = (secret: string) => Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');

export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a signed message. */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature(secret, id, timestamp, body),
  };
}
