/**
 * One change the model asked for. The parser only ever emits `replace` and `delete`: an empty
 * SEARCH means "create" or "fill an empty file", which only the applier (it sees the disk) can tell.
 * `create` exists for callers that build edits themselves.
 */
export type Edit =
  | { kind: 'replace'; path: string; search: string; replace: string }
  | { kind: 'create'; path: string; content: string }
  | { kind: 'delete'; path: string }
  /** Moves `path` to `to`, content and mode kept (blocks for `to` may follow). */
  | { kind: 'rename'; path: string; to: string }
  /** Sets or clears the executable bits (git's 100755 / 100644). */
  | { kind: 'mode'; path: string; executable: boolean }
  /** Whether the file ends with a line terminator: blocks keep a file's state, this changes it. */
  | { kind: 'final-newline'; path: string; present: boolean };

export interface ParseResult {
  edits: Edit[];
  /** One sentence per malformed block, naming the path and the answer's line, fit to show the model. */
  errors: string[];
  /** Everything outside blocks: the model's commentary. */
  notes: string;
  /**
   * The answer ended inside a block (SEARCH with no REPLACE before the end): its path, as the
   * error in `errors` names it, and that error. A cut-off answer explains it better than the error.
   */
  open?: { path: string; error: string };
}

/** How an applied edit found its place: `new` for created files. */
export type MatchKind = 'exact' | 'whitespace' | 'fuzzy' | 'new';

export interface ApplyReport {
  /** A rename is reported at its new path, with `from` the old one. */
  applied: { path: string; kind: 'modified' | 'created' | 'deleted' | 'renamed'; match: MatchKind; from?: string }[];
  /** `reason` is written for the model: what failed and what the file holds near the closest match. */
  failed: { path: string; reason: string }[];
  /**
   * Blocks whose REPLACE the file already holds where SEARCH would be (a resent block): nothing
   * written, not a failure. Lines are 1-based, inclusive.
   */
  already: { path: string; startLine: number; endLine: number }[];
}
