import type { Clock } from '../../clock.js';
import type { InstallationToken } from './app.js';

/** A token this close to expiring is not handed out: a clone, a push and a pull request fit in it. */
export const TOKEN_MARGIN_MS = 5 * 60_000;
/** Tokens kept at most (one per installation and repository in use). */
const MAX_KEPT = 1_000;

/**
 * The installation tokens this process minted, each kept until shortly before it expires (by the
 * injectable clock) so a task's clone, push, pull request and comments cost one mint. Two callers
 * asking at once share one mint. Tokens live in memory only: never written to the database.
 */
export class InstallationTokens {
  private readonly kept = new Map<string, Promise<InstallationToken>>();
  private readonly identities = new Map<string, Promise<{ name: string; email: string }>>();

  constructor(private readonly clock: Clock) {}

  /** The kept token for `key` (host, installation, repository), or a new one from `mint`. */
  async token(key: string, mint: () => Promise<InstallationToken>): Promise<string> {
    const held = this.kept.get(key);
    if (held) {
      const t = await held.catch(() => undefined);
      if (t && t.expiresAt.getTime() - TOKEN_MARGIN_MS > this.clock.now().getTime()) return t.token;
      if (this.kept.get(key) === held) this.kept.delete(key);
    }
    const minting = mint();
    this.kept.set(key, minting);
    minting.catch(() => this.kept.get(key) === minting && this.kept.delete(key));
    if (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    return (await minting).token;
  }

  /**
   * The app's bot identity on a host, asked once per process (the bot user's id never changes); a
   * failed look is not kept.
   */
  async identity(host: string, look: () => Promise<{ name: string; email: string }>) {
    let known = this.identities.get(host);
    if (!known) {
      known = look();
      this.identities.set(host, known);
      known.catch(() => this.identities.get(host) === known && this.identities.delete(host));
    }
    return known;
  }

  /** Forgets the tokens of an installation (uninstalled, suspended, its repositories changed). */
  forget(prefix: string): void {
    for (const key of this.kept.keys()) if (key.startsWith(prefix)) this.kept.delete(key);
  }
}
