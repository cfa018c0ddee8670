import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * What the hosts' verifications of a webhook delivery share: reading a header whatever its case,
 * and the two ways a host proves a delivery is its own, a hex HMAC-SHA256 of the raw body
 * (GitHub, Gitea/Forgejo) or the secret itself sent back (GitLab). Both compare in constant time,
 * so a forger learns nothing from how long a refusal takes.
 */

/** Request headers as Node gives them (or any other case): a value, several, or none. */
export type DeliveryHeaders = Record<string, string | string[] | undefined>;

/**
 * The header `name` (any case). Two headers of one name are no answer: a delivery that repeats
 * its signature is not the host's.
 */
export function header(headers: DeliveryHeaders, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const values = Object.entries(headers)
    .filter(([key]) => key.toLowerCase() === wanted)
    .flatMap(([, value]) => (value === undefined ? [] : Array.isArray(value) ? value : [value]));
  return values.length === 1 ? values[0] : undefined;
}

/**
 * The first of `names` the delivery carries (Forgejo sends its own headers beside Gitea's), read
 * as `header` reads it: one that is there but repeated is no answer, not a reason to try the next.
 */
export function firstHeader(headers: DeliveryHeaders, ...names: string[]): string | undefined {
  const present = new Set(Object.keys(headers).map((k) => k.toLowerCase()));
  const name = names.find((n) => present.has(n.toLowerCase()));
  return name === undefined ? undefined : header(headers, name);
}

/** Equal bytes, in time that does not depend on where they differ; different lengths are unequal at once. */
function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/**
 * `signature` (64 hex digits) is the HMAC-SHA256 of `body` under `secret`. An empty secret
 * verifies nothing: a hook registered without one would otherwise accept anyone's delivery.
 */
export function signedWith(signature: string | undefined, body: Buffer, secret: string): boolean {
  if (!secret || signature === undefined || !HEX_SHA256.test(signature)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return sameBytes(Buffer.from(signature, 'hex'), expected);
}

/**
 * `token` is the secret itself (GitLab's X-Gitlab-Token); an empty secret matches nothing. Both
 * are compared as digests of one length, so not even the secret's length shows in the time taken.
 */
export function sameSecret(token: string | undefined, secret: string): boolean {
  if (!secret || token === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return sameBytes(digest(token), digest(secret));
}
