// The parsers' shared vocabulary, apart from parse.ts so the parsers need not import the module
// that imports them.

export type TestStatus = 'passed' | 'failed' | 'skipped';

/** What one parser understood of a run's output. */
export interface ParserResult {
  /** Test id and status, in the runner's own naming. */
  tests: [string, TestStatus][];
  /** Indexes of the lines that belong to the reports the parser read (result lines, failure details). */
  explained: number[];
  /** A test that had started and not finished when the output ended (the one hanging at a timeout). */
  running?: string;
}

export type Parser = (lines: string[]) => ParserResult;
