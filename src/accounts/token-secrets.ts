import { createHash, randomBytes } from 'node:crypto';

export type TokenKind = 'full' | 'demo';

// 30 random bytes = 240 bits, written as 40 base64url characters.
const SECRET_BYTES = 30;
const TOKEN_SHAPE = /^tk_(?:demo_)?[A-Za-z0-9_-]{40}$/;

export interface IssuedToken {
  secret: string;
  hash: string;
  last4: string;
}

export function issueToken(kind: TokenKind): IssuedToken {
  const secret = (kind === 'demo' ? 'tk_demo_' : 'tk_') + randomBytes(SECRET_BYTES).toString('base64url');
  return { secret, hash: hashToken(secret), last4: secret.slice(-4) };
}

/** Tokens are stored as SHA-256 only; the secret is shown once, at creation. */
export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function looksLikeToken(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}
