// The parsers' shared vocabulary, apart from parse.ts so the parsers need not import the module
// that imports them.

export type TestStatus = 'passed' | 'failed' | 'skipped';

/** Where a failure happened: a file of the checkout (relative to it) and a line. */
export interface Frame {
  path: string;
  line: number;
}

/** What a runner said about one failing test: its assertion message and its innermost frame in the checkout. */
export interface FailureDetail {
  message?: string;
  frame?: Frame;
  /** The file that holds the test, when the runner names it apart from the id (jest's `FAIL path`). */
  file?: string;
}

/** What one parser understood of a run's output. */
export interface ParserResult {
  /** Test id and status, in the runner's own naming. */
  tests: [string, TestStatus][];
  /** Indexes of the lines that belong to the reports the parser read (result lines, failure details). */
  explained: number[];
  /** A test that had started and not finished when the output ended (the one hanging at a timeout). */
  running?: string;
  /** Failing tests' messages and frames, by the same ids as `tests`, where the parser read them. */
  details?: [string, FailureDetail][];
}

export type Parser = (lines: string[]) => ParserResult;
