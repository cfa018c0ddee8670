import { parseOutput } from '../test-runs/parse.js';
import { REDACTED, redact } from '../text/redact.js';

/**
 * A failing CI job's log, clipped for a follow-up's prompt (docs/triggers.md, "CI follow-ups"):
 * the failing step's output (GitHub and Gitea Actions' step groups, GitLab's script section),
 * escape sequences and the runners' timestamps stripped, anything that looks like a secret
 * replaced, and a bounded tail of it; with the failing tests it names, read by the same parsers
 * the validator reads the sandbox's test output with.
 */

/** A log is read from its end: the start of a longer one is no help to a fix (and could be very long). */
const LOG_MAX_CHARS = 2_000_000;
/** The tail a prompt carries: at most this many lines… */
export const TAIL_LINES = 40;
/** …and characters (a task's prompt is at most 2,000: the job, the step and the tests come first). */
export const TAIL_CHARS = 1_200;
/** Failing tests named at most. */
const MAX_TESTS = 20;

export interface ClippedLog {
  /** The failing step as the log names it (GitHub Actions' `Run …`, GitLab's script), when it does. */
  step?: string;
  /** The end of the failing step's output, cleaned and redacted, within TAIL_LINES and TAIL_CHARS. */
  tail: string;
  /** The failing tests the step's output names. */
  tests: string[];
}

// CSI (colours, cursor moves), OSC (titles, links) and the two-character escapes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC and BEL start and end the sequences removed here.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
/** What the runners put before each line: GitHub's and Gitea's `2024-05-01T10:00:00.1234567Z `. */
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) ?/;
/** GitLab's collapsible sections: `section_start:1700000000:step_script[collapsed=true]` before a `\r`. */
const SECTION = /section_(start|end):\d+:([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\r?/g;
/** A step's start in GitHub's (and act's) log: `##[group]Run npm test`. */
const STEP_GROUP = /^(?:##\[group\]|::group::)(.*)$/;
/** The line that says the step failed. */
const FAILED = /^(?:##\[error\]|::error\b)|^ERROR: Job failed\b/;
/** GitLab's sections that hold the job's own commands. */
const SCRIPT_SECTIONS = new Set(['step_script', 'build_script', 'script']);

/** What looks like a secret in a log, whatever printed it (hosts mask their own secrets; tools print others). */
const SECRET_SHAPES: [RegExp, string][] = [
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g, REDACTED],
  [/\b(?:glpat|gldt|glrt|glptt)-[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  [/\bnpm_[A-Za-z0-9]{30,}/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, REDACTED],
  // `Authorization: Bearer …`, `Basic …`: the credential after the scheme.
  [/\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{12,}/gi, `$1 ${REDACTED}`],
  // A password in a URL: https://user:secret@host.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)[^@\s/]+@/gi, `$1${REDACTED}@`],
  // PASSWORD=…, api_key: "…", client-secret=…
  [
    /\b([A-Za-z0-9_]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Za-z0-9_-]*\s*[:=]\s*)(["']?)[^\s"']{4,}\2/gi,
    `$1${REDACTED}`,
  ],
];

/** `text` with every known secret and everything shaped like one replaced. */
export function redactSecrets(text: string, secrets: string[] = []): string {
  let out = redact(text, secrets);
  for (const [shape, replacement] of SECRET_SHAPES) out = out.replace(shape, replacement);
  return out;
}

/** One line as a person reads it: escapes gone, a carriage return's overwritten text gone, no timestamp. */
function cleanLine(line: string): string {
  const plain = line.replace(ANSI, '');
  const parts = plain.split('\r');
  const shown = [...parts].reverse().find((part) => part.trim() !== '') ?? '';
  return shown.replace(TIMESTAMP, '');
}

interface Line {
  text: string;
  /** The GitLab section it is in (innermost), if any. */
  section?: string;
}

/** The log's lines, cleaned, each with the GitLab section it is in. */
function linesOf(raw: string): Line[] {
  const text = raw.length > LOG_MAX_CHARS ? raw.slice(raw.length - LOG_MAX_CHARS) : raw;
  const open: string[] = [];
  const lines: Line[] = [];
  for (const rawLine of text.replace(/\r\n/g, '\n').split('\n')) {
    let starts = false;
    const withoutMarks = rawLine.replace(SECTION, (_m, kind: string, name: string) => {
      if (kind === 'start') {
        open.push(name);
        starts = true;
      } else {
        const at = open.lastIndexOf(name);
        if (at >= 0) open.splice(at);
      }
      return '';
    });
    const cleaned = cleanLine(withoutMarks);
    // A section's header line (its title after the marker) belongs to the section it opens.
    if (starts || cleaned !== '' || withoutMarks === rawLine) lines.push({ text: cleaned, section: open.at(-1) });
  }
  return lines;
}

/**
 * The failing step's lines: from the step's start (the last `##[group]` before the first error
 * line; GitLab: its script section) to its last error line before the next step, or the whole log
 * when it shows no steps.
 */
function failingStep(lines: Line[]): { step?: string; lines: string[] } {
  const script = lines.filter((l) => l.section && SCRIPT_SECTIONS.has(l.section));
  if (script.length > 0) {
    const ended = lines.findIndex((l) => FAILED.test(l.text));
    return { step: 'script', lines: [...script.map((l) => l.text), ...(ended >= 0 ? [lines[ended]!.text] : [])] };
  }
  const texts = lines.map((l) => l.text);
  const failedAt = texts.findIndex((t) => FAILED.test(t));
  let from = -1;
  for (let i = failedAt >= 0 ? failedAt : texts.length - 1; i >= 0; i--)
    if (STEP_GROUP.test(texts[i]!)) {
      from = i;
      break;
    }
  // The step goes on to the next step's group (a reporter may annotate errors before its summary).
  let end = texts.length - 1;
  if (failedAt >= 0) {
    const next = texts.findIndex((t, i) => i > failedAt && STEP_GROUP.test(t));
    const stop = next < 0 ? texts.length : next;
    end = failedAt;
    for (let i = failedAt; i < stop; i++) if (FAILED.test(texts[i]!)) end = i;
  }
  if (from < 0) return { lines: texts.slice(0, end + 1) };
  const step = STEP_GROUP.exec(texts[from]!)![1]!.trim();
  return { ...(step ? { step } : {}), lines: texts.slice(from, end + 1) };
}

/** The last lines within TAIL_LINES and TAIL_CHARS (a longer last line keeps its end). */
function tailOf(lines: string[]): string {
  const shown = lines
    .filter((l) => !/^(?:##\[(?:group|endgroup)\]|::(?:group|endgroup)::)/.test(l))
    .map((l) => l.trimEnd());
  while (shown.length > 0 && shown[0] === '') shown.shift();
  while (shown.length > 0 && shown.at(-1) === '') shown.pop();
  const kept: string[] = [];
  let chars = 0;
  for (let i = shown.length - 1; i >= 0 && kept.length < TAIL_LINES; i--) {
    const line = shown[i]!;
    if (chars + line.length + 1 > TAIL_CHARS) {
      if (kept.length === 0) kept.unshift(`…${line.slice(line.length - (TAIL_CHARS - 1))}`);
      break;
    }
    kept.unshift(line);
    chars += line.length + 1;
  }
  return kept.join('\n');
}

/** A job's log clipped to its failing step: the step's name, a redacted tail, the failing tests it names. */
export function clipLog(raw: string, secrets: string[] = []): ClippedLog {
  const { step, lines } = failingStep(linesOf(raw));
  const output = redactSecrets(lines.join('\n'), secrets);
  const parsed = parseOutput(output);
  const tests = [...parsed.tests]
    .filter(([, status]) => status === 'failed')
    .map(([id]) => id)
    .slice(0, MAX_TESTS);
  return { ...(step ? { step: redactSecrets(step, secrets) } : {}), tail: tailOf(output.split('\n')), tests };
}
