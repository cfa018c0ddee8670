import { detail, messageOf, repoFrame } from './failure-detail.js';
import type { FailureDetail, ParserResult, TestStatus } from './parser-types.js';

interface GoEvent {
  Action?: string;
  Package?: string;
  Test?: string;
  Output?: string;
}

/**
 * `go test -json`: one event per line. Ids are "package TestName" (subtests keep go's
 * "TestName/sub"); a parent whose subtests are reported is not a test of its own. A
 * package that failed with no failing test (build failure, TestMain, a panic) is
 * "package (package)". After `-timeout` go prints the tests that were running: they failed.
 */
export function parseGoJson(lines: string[]): ParserResult {
  const status = new Map<string, TestStatus>();
  const explained: number[] = [];
  const failedPackages = new Set<string>();
  const timedOut = new Map<string, boolean>();
  lines.forEach((line, i) => {
    if (!line.startsWith('{')) return;
    let event: GoEvent;
    try {
      event = JSON.parse(line) as GoEvent;
    } catch {
      return;
    }
    if (typeof event.Action !== 'string' || typeof event.Package !== 'string') return;
    explained.push(i);
    const pkg = event.Package;
    if (event.Action === 'output' && event.Output) {
      if (/^panic: test timed out after/.test(event.Output)) timedOut.set(pkg, true);
      const running = timedOut.get(pkg) ? /^\s+(Test\S*) \([^)]*\)\s*$/.exec(event.Output) : null;
      if (running) status.set(`${pkg} ${running[1]}`, 'failed');
      return;
    }
    const s: TestStatus | undefined =
      event.Action === 'pass'
        ? 'passed'
        : event.Action === 'fail'
          ? 'failed'
          : event.Action === 'skip'
            ? 'skipped'
            : undefined;
    if (!s) return;
    if (event.Test) {
      if (status.get(`${pkg} ${event.Test}`) !== 'failed') status.set(`${pkg} ${event.Test}`, s);
    } else if (s === 'failed') failedPackages.add(pkg);
  });
  for (const pkg of failedPackages) {
    if (![...status].some(([id, s]) => s === 'failed' && id.startsWith(`${pkg} `)))
      status.set(`${pkg} (package)`, 'failed');
  }
  return { tests: withoutParents(status, '/'), explained };
}

/** Drops ids that other ids extend with `sep` (a test whose subtests are reported). */
function withoutParents(status: Map<string, TestStatus>, sep: string): [string, TestStatus][] {
  const ids = [...status.keys()];
  return [...status].filter(([id]) => !ids.some((other) => other.startsWith(`${id}${sep}`)));
}

/** `go test -v` as text: `--- FAIL: TestName (0.00s)`, the lines indented under it are its details. */
export function parseGoVerbose(lines: string[]): ParserResult {
  const status = new Map<string, TestStatus>();
  const explained: number[] = [];
  let detailIndent = -1;
  lines.forEach((line, i) => {
    const m = /^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(/.exec(line);
    if (m) {
      const s: TestStatus = m[2] === 'PASS' ? 'passed' : m[2] === 'FAIL' ? 'failed' : 'skipped';
      status.set(m[3]!, s);
      explained.push(i);
      detailIndent = s === 'failed' ? m[1]!.length : -1;
      return;
    }
    if (detailIndent >= 0 && line.length - line.trimStart().length > detailIndent && line.trim() !== '')
      explained.push(i);
    else detailIndent = -1;
    if (/^(FAIL|ok)\s+\S+\s+(\d|\[)|^FAIL$/.test(line)) explained.push(i);
  });
  return { tests: withoutParents(status, '/'), explained };
}

/**
 * cargo test: `test path::name ... ok|FAILED|ignored`; the failures section (each failing
 * test's captured output and panic) runs up to `test result:`. cargo warns about a test
 * running for over 60 seconds: the one hanging.
 */
export function parseCargo(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  let inFailures = false;
  let running: string | undefined;
  lines.forEach((line, i) => {
    const m = /^test (.+?) \.\.\. (ok|FAILED|ignored)\b/.exec(line);
    if (m) {
      tests.push([m[1]!, m[2] === 'ok' ? 'passed' : m[2] === 'FAILED' ? 'failed' : 'skipped']);
      explained.push(i);
      if (m[1] === running) running = undefined;
      return;
    }
    const slow = /^test (.+?) has been running for over \d+ seconds/.exec(line);
    if (slow) running = slow[1];
    if (/^failures:\s*$/.test(line)) inFailures = true;
    if (inFailures || /^error: test failed, to rerun/.test(line)) explained.push(i);
    if (/^test result: /.test(line)) inFailures = false;
  });
  return { tests, explained, running, details: cargoDetails(lines) };
}

/**
 * The panics of the failures section: `thread 'id' panicked at src/lib.rs:10:9:` with the
 * message on the lines after it (Rust 1.73+), or `panicked at 'message', src/lib.rs:10:9`.
 */
function cargoDetails(lines: string[]): [string, FailureDetail][] {
  const out: [string, FailureDetail][] = [];
  lines.forEach((line, i) => {
    const now = /^thread '(.+?)' panicked at ([^\s:]+):(\d+):\d+:$/.exec(line);
    const old = /^thread '(.+?)' panicked at '(.*)', ([^\s:]+):(\d+):\d+$/.exec(line);
    if (now) {
      const rest = lines.slice(i + 1).findIndex((l) => /^note: |^\s*$|^---- /.test(l));
      const message = lines.slice(i + 1, rest === -1 ? undefined : i + 1 + rest);
      const found = detail(messageOf(message), repoFrame(now[2]!, now[3]!));
      if (found) out.push([now[1]!, found]);
    } else if (old) {
      const found = detail(messageOf([old[2]!]), repoFrame(old[3]!, old[4]!));
      if (found) out.push([old[1]!, found]);
    }
  });
  return out;
}

/**
 * Maven Surefire: failing tests as `[ERROR] testName(com.x.Class)  Time elapsed: ... <<< FAILURE!`
 * (Surefire 2) or `[ERROR] com.x.Class.testName -- Time elapsed: ... <<< FAILURE!` (Surefire 3);
 * passing tests are only counted per class. The stack traces under a failure and the
 * [ERROR] summary are its details.
 */
export function parseMaven(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  let inTrace = false;
  lines.forEach((line, i) => {
    const old = /^\[ERROR\] (\w+)\(([\w.$]+)\)\s+Time elapsed:.*<<< (FAILURE|ERROR)!/.exec(line);
    const current = /^\[ERROR\] ([\w.$]+)\.(\w+)(?:\(\))?\s+-- Time elapsed:.*<<< (FAILURE|ERROR)!/.exec(line);
    if (old || current) {
      tests.push([old ? `${old[2]}.${old[1]}` : `${current![1]}.${current![2]}`, 'failed']);
      explained.push(i);
      inTrace = true;
      return;
    }
    if (/^\[(INFO|WARNING)\]/.test(line) || /^\[ERROR\] Tests run:/.test(line)) inTrace = false;
    if (inTrace || (tests.length > 0 && /^\[ERROR\]/.test(line))) explained.push(i);
  });
  return { tests, explained };
}

/** Gradle's console: `Class > test FAILED|PASSED|SKIPPED` and the exception lines indented under a failure. */
export function parseGradle(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  let inDetails = false;
  lines.forEach((line, i) => {
    const m = /^(\S.*? > .+?) (PASSED|FAILED|SKIPPED)\s*$/.exec(line);
    if (m) {
      tests.push([m[1]!, m[2] === 'PASSED' ? 'passed' : m[2] === 'FAILED' ? 'failed' : 'skipped']);
      explained.push(i);
      inDetails = m[2] === 'FAILED';
      return;
    }
    if (inDetails && /^\s+\S/.test(line)) explained.push(i);
    else inDetails = false;
    if (
      tests.some(([, s]) => s === 'failed') &&
      /^(BUILD FAILED|FAILURE: |\d+ tests? completed, \d+ failed)/.test(line)
    )
      explained.push(i);
  });
  return { tests, explained };
}
