import { z } from 'zod';
import { parseAs } from './env.js';

/** 64 hex characters, or base64 (or base64url) of exactly 32 bytes. */
export const secretKey = z.string().transform((raw, ctx) => {
  const value = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const b = Buffer.from(value, 'base64');
  if (b.length === 32 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return b;
  ctx.addIssue({ code: 'custom', message: 'expected 32 bytes as 64 hex characters or base64' });
  return z.NEVER;
});

/** The AES-256-GCM key from EMEND_SECRET_KEY or the data dir's key file (named in the error as `variable`). */
export const parseSecretKey = (raw: string, variable = 'EMEND_SECRET_KEY'): Buffer => parseAs(variable, raw, secretKey);
