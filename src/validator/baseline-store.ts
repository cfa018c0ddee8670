import { and, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { baselineResults } from '../db/schema.js';
import { KeptBaseline } from './kept-baseline.js';
import { type KeptRow, storeSecret } from './baseline-key.js';

/*
 * Where kept baselines live (docs/validator.md, "Kept baselines"): the service's database, so every
 * worker, on any machine, finds what another ran. A cache: bounded in bytes, least recently used
 * first; a lookup that finds nothing, or a row it cannot read, is a miss and the baseline runs.
 */

/** The validator's view of the store: look up by key, keep a run. */
export interface BaselineStore {
  /** The HMAC secret keys are made with (the same on every worker). */
  readonly secret: Buffer;
  /** Whose baselines: the workspace and the repository (keys are per workspace, src/validator/baseline-key.ts). */
  readonly scope: { workspace: string; repository: string };
  /**
   * The kept baseline and when it ran, if it ran today (UTC), or undefined; a hit counts as a use
   * (the cap evicts the least recently used).
   */
  lookup(key: string): Promise<{ kept: KeptBaseline; ranAt: Date } | undefined>;
  /** Keeps a run (replacing an older one under the key), then evicts down to the cap. */
  save(row: KeptRow, kept: KeptBaseline): Promise<void>;
}

export interface DbBaselineStoreOptions {
  db: Db;
  /** The service's secret key (EMEND_SECRET_KEY): the store's own is derived from it. */
  secretKey: Buffer;
  workspace: string;
  repository: string;
  /** EMEND_BASELINE_CACHE_MB in bytes: the rows' results, as JSON text, together. */
  maxBytes: number;
  now: () => Date;
  metrics?: { hit(): void; miss(): void };
}

export class DbBaselineStore implements BaselineStore {
  readonly secret: Buffer;
  readonly scope: { workspace: string; repository: string };

  constructor(private readonly options: DbBaselineStoreOptions) {
    this.secret = storeSecret(options.secretKey);
    this.scope = { workspace: options.workspace, repository: options.repository };
  }

  async lookup(key: string): Promise<{ kept: KeptBaseline; ranAt: Date } | undefined> {
    const now = this.options.now();
    const [row] = await this.options.db
      .update(baselineResults)
      .set({ usedAt: now, hits: sql`${baselineResults.hits} + 1` })
      // Only a run of today (UTC, the sandbox's zone): a test that reads the date may fail tomorrow on either tree.
      .where(and(eq(baselineResults.key, key), gte(baselineResults.createdAt, startOfDay(now))))
      .returning({ result: baselineResults.result, createdAt: baselineResults.createdAt });
    const parsed = row ? KeptBaseline.safeParse(row.result) : undefined;
    if (!row || !parsed?.success) {
      this.options.metrics?.miss();
      return undefined;
    }
    this.options.metrics?.hit();
    return { kept: parsed.data, ranAt: row.createdAt };
  }

  async save(row: KeptRow, kept: KeptBaseline): Promise<void> {
    const text = JSON.stringify(kept);
    const bytes = Buffer.byteLength(text);
    // One run larger than the whole cap would only evict everything else.
    if (bytes > this.options.maxBytes) return;
    const now = this.options.now();
    await this.options.db
      .insert(baselineResults)
      .values({
        key: row.key,
        workspaceId: row.workspace,
        repository: row.repository,
        baseCommit: row.commit,
        envKey: row.envKey,
        command: row.command,
        testFilesDigest: row.testFilesDigest ?? null,
        result: kept,
        bytes,
        createdAt: now,
        usedAt: now,
      })
      // A row of an earlier day (no longer read) is replaced; two workers keeping one run at once write the same.
      .onConflictDoUpdate({ target: baselineResults.key, set: { result: kept, bytes, createdAt: now, usedAt: now } });
    await evictBaselines(this.options.db, this.options.maxBytes);
  }
}

/**
 * Deletes the least recently used rows until the rest fit in `maxBytes`: the most recently used
 * ones are kept while their running total fits. Two workers evicting at once delete the same rows.
 */
export async function evictBaselines(db: Db, maxBytes: number): Promise<void> {
  await db.execute(sql`
    delete from ${baselineResults} where ${baselineResults.key} in (
      select key from (
        select key, sum(bytes) over (order by used_at desc, key desc) as total from ${baselineResults}
      ) ranked
      where total > ${maxBytes}
    )`);
}

/** Midnight UTC of the day `at` falls on. */
const startOfDay = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
