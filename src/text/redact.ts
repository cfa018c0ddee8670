/** What stands where a secret was, in every text the service lets out (setup output, model requests). */
export const REDACTED = '[redacted]';

/** Values shorter than this are not looked for: they would match ordinary text by chance. */
export const MIN_SECRET_CHARS = 4;

/**
 * The values worth looking for, each once, longest first so that a secret holding another is
 * replaced whole (not left as `[redacted]` plus the longer one's rest).
 */
export const secretNeedles = (secrets: Iterable<string>): string[] =>
  [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);

/** `text` with every secret of at least MIN_SECRET_CHARS characters replaced by REDACTED. */
export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= MIN_SECRET_CHARS && out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}
