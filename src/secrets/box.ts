import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// AES-256-GCM with a fresh 96-bit nonce per record; stored as "v1.<nonce>.<tag>.<ciphertext>" in base64url.
const VERSION = 'v1';

export function encryptSecret(key: Buffer, plaintext: string, context: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  // The context (e.g. account id and provider) is authenticated, so a ciphertext cannot be moved to another row.
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    VERSION,
    nonce.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    body.toString('base64url'),
  ].join('.');
}

export function decryptSecret(key: Buffer, sealed: string, context: string): string {
  const [version, nonce, tag, body] = sealed.split('.');
  if (version !== VERSION || !nonce || !tag || body === undefined) throw new Error('unreadable sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
