import { type KeyObject, verify } from 'node:crypto';

/**
 * A GitHub App's JWT as GitHub checks it (docs.github.com "Generating a JSON Web Token (JWT) for a
 * GitHub App"): RS256 over the app's key, `iss` the app's id or client id, `iat` at most 60 s ahead,
 * `exp` in the future and at most 10 minutes after `iat`. Failures carry GitHub's words (which
 * @octokit/auth-app reads to retry with the server's clock).
 */

export const JWT_WORDS = {
  undecodable: 'A JSON web token could not be decoded',
  tooFar: "'Expiration time' claim ('exp') is too far in the future",
  expired:
    "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
  issuedLater: "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
};

/** Three base64url parts: a JWT, not a token GitHub issued (those have no dots). */
export const looksLikeJwt = (token: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);

const part = (text: string): Record<string, unknown> | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    return parsed !== null && typeof parsed === 'object' ? { ...parsed } : undefined;
  } catch {
    return undefined;
  }
};

/** The issuer of a valid JWT (as it wrote it), or GitHub's message for why it is refused. `now`: ms. */
export function checkJwt(
  jwt: string,
  keyOf: (issuer: string) => KeyObject | undefined,
  now: number,
): { issuer: string } | { refused: string } {
  const [h = '', p = '', sig = ''] = jwt.split('.');
  const [header, claims] = [part(h), part(p)];
  if (header?.alg !== 'RS256' || !claims) return { refused: JWT_WORDS.undecodable };
  const issuer = String(claims.iss ?? '');
  const key = keyOf(issuer);
  const signed = key && verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(sig, 'base64url'));
  if (!signed) return { refused: JWT_WORDS.undecodable };
  const [iat, exp, seconds] = [claims.iat, claims.exp, Math.floor(now / 1000)];
  if (typeof iat !== 'number' || iat > seconds + 60) return { refused: JWT_WORDS.issuedLater };
  if (typeof exp !== 'number' || exp <= seconds) return { refused: JWT_WORDS.expired };
  if (exp - iat > 600) return { refused: JWT_WORDS.tooFar };
  return { issuer };
}
