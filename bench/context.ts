/**
 * What the fixer is shown, measured (npm run bench:context): over the SWE-bench Lite instances of
 * /work/shared/bench/swe-lite-eval.jsonl, each repository checked out at base_commit from its mirror
 * (as bench/locator.ts does: a shared clone, the mirror never written), the real locate(), a scripted
 * inspector, and the fixer's file section assembled. The gold `patch` is read only to measure:
 *
 * - a gold line is a non-blank line of a hunk's pre-image (the lines it removes and its context
 *   lines); it is *shown* when the file's section of the prompt holds it as a whole line, verbatim;
 * - a hunk is *visible* when its whole pre-image (blank lines included, in order) is a contiguous
 *   run of lines of the file's section: the fixer could quote it as one SEARCH block.
 *
 * The scripted inspector names, for each located file, the 3 leaf definitions (functions and methods
 * holding no other definition) whose names best match the problem statement (src/locator/match.ts,
 * as the re-rank outline does); relevance high for the
 * first file, medium for the next two, low after. `--before` assembles with the fixer's code of
 * commit c16a505 (copied below: an even split, long files as the spans ±20 lines, clip()).
 *
 * Gold hunks are those of the patch's files that are source files of the set's language (that of
 * most files its patches change) and not tests (bench/locator-sets.ts: isTestFile, isLanguageFile),
 * as the locator benchmark's gold files are; an instance without any (its fix only creates files)
 * is left out of the figures and counted apart.
 *
 * `--files N` is the plan's `maxFiles`, and the files go from `locate()` to the fixer as the locator
 * step hands them on (src/steps/fix/locator.ts, its own functions): the ranking's first
 * `locatedCount(N)` files, the re-rank's shortlist of 15 among them, `handOff` then `fixerFiles`. So
 * without a re-rank the fixer is shown the shortlist as selected and, when N is larger, the files
 * ranked after it as its fill. The scripted inspector sees the selected files only, as the inspector
 * step does. A gold file counts as located when it is among the ranking's first N.
 *
 * `--rerank SPECS` (comma-separated) also measures a scripted model re-rank over the shortlist:
 * `first:K` keeps its first K files, `last:K` its last K (a re-rank that names the wrong file, as
 * one naming README.md does), put through the step's applyRanking. Each spec is measured twice:
 * `kept`, the fixer shown the selected files alone (the fixer before the fill), and `fill`, the files
 * the re-rank left out filling what the budget leaves, then those beyond the shortlist what they
 * leave, in the deterministic order (the fixer now).
 *
 *   --before   --files N (default 15: the locator's shortlist)   --budget CHARS (default 120000)
 *   --rerank first:3,last:1   --only SUBSTRING
 *   BENCH_DATA (default /work/shared/bench/swe-lite-eval.jsonl), BENCH_MIRRORS (/work/.mirror)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { type FileDefinition, locate } from '../src/locator/index.js';
import { matchingDefinitions } from '../src/locator/match.js';
import type { Insight } from '../src/step-contract/index.js';
import { assembleFixerFiles } from '../src/steps/fix/fixer-context.js';
import { readForPrompt } from '../src/steps/fix/file-views.js';
import { applyRanking, fixerFiles, handOff, locateOptions, shortlistOf } from '../src/steps/fix/locator.js';
import { fenced } from '../src/steps/prompt-parts.js';
import { clip } from '../src/text/clip.js';
import { loadAverage, log, pressure } from './stats.js';
import { mirrorGitDir as mirrorOf } from '../src/eval/checkout.js';
import { type SetLanguage, changedFiles, isLanguageFile, isTestFile } from './locator-sets.js';

interface Instance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  patch: string;
}

interface Hunk {
  file: string;
  pre: string[];
}

const DATA = process.env.BENCH_DATA ?? '/work/shared/bench/swe-lite-eval.jsonl';
const MIRRORS = process.env.BENCH_MIRRORS ?? '/work/.mirror';

/** The hunks of a unified diff: for each, its file (the pre-image path) and its pre-image lines. */
export function goldHunks(patch: string): Hunk[] {
  const hunks: Hunk[] = [];
  let file = '';
  let current: Hunk | undefined;
  for (const line of patch.split('\n')) {
    if (line.startsWith('--- ')) {
      file = line.slice(4).replace(/^a\//, '');
      current = undefined;
    } else if (line.startsWith('+++ ') || line.startsWith('diff ')) {
      current = undefined;
    } else if (line.startsWith('@@')) {
      current = { file, pre: [] };
      hunks.push(current);
    } else if (current && (line.startsWith(' ') || line.startsWith('-'))) {
      current.pre.push(line.slice(1));
    } else if (current && line === '') {
      // A blank context line whose leading space was trimmed by the patch's producer.
      current.pre.push('');
    }
  }
  for (const h of hunks) while (h.pre.length && h.pre[h.pre.length - 1] === '') h.pre.pop();
  return hunks.filter((h) => h.pre.length > 0 && h.file !== '/dev/null');
}

/** Whether `run` is a contiguous run of `lines`. */
function containsRun(lines: string[], run: string[]): boolean {
  outer: for (let i = 0; i + run.length <= lines.length; i++) {
    for (let j = 0; j < run.length; j++) if (lines[i + j] !== run[j]) continue outer;
    return true;
  }
  return false;
}

// ---- The fixer's assembly at commit c16a505, kept to measure against. ----
const OLD_WHOLE_LINES = 600;
const OLD_SPAN_CONTEXT = 20;
function oldFileForFixer(dir: string, path: string, insight: Insight | undefined, maxChars: number) {
  const read = readForPrompt(dir, path);
  if (!read) return undefined;
  if ('link' in read) return `## ${path}\n${read.link} (outside the repository: not shown)`;
  const { source } = read;
  const lines = source.split('\n');
  if (lines.length <= OLD_WHOLE_LINES && source.length <= maxChars) return `## ${path}\n${fenced(source)}`;
  const spans = (insight?.symbols ?? []).map((s) => ({
    start: Math.max(1, s.start_line - OLD_SPAN_CONTEXT),
    end: Math.min(lines.length, s.end_line + OLD_SPAN_CONTEXT),
  }));
  if (spans.length === 0) spans.push({ start: 1, end: Math.min(lines.length, OLD_WHOLE_LINES) });
  const parts = spans.map(
    (s) => `lines ${s.start}-${s.end} of ${lines.length}:\n${fenced(lines.slice(s.start - 1, s.end).join('\n'))}`,
  );
  return clip(`## ${path} (excerpts; the rest of the file is unchanged)\n${parts.join('\n')}`, maxChars);
}
function oldAssembly(dir: string, paths: string[], insights: Insight[], budget: number): string[] {
  const perFile = Math.floor(budget / Math.max(1, paths.length));
  return paths
    .map((p) =>
      oldFileForFixer(
        dir,
        p,
        insights.find((i) => i.file === p),
        perFile,
      ),
    )
    .filter((s): s is string => !!s);
}
// ---- end of the old assembly ----

/** Definitions holding no other definition: the functions and methods an inspector names to change. */
function leaves(defs: FileDefinition[]): FileDefinition[] {
  return defs.filter((d) => !defs.some((o) => o !== d && o[2] >= d[2] && o[3] <= d[3] && o[3] - o[2] < d[3] - d[2]));
}

/** The scripted inspector: the best-matching leaf definitions of each located file, relevance by rank. */
export function scriptedInsights(
  paths: string[],
  definitions: Record<string, FileDefinition[]>,
  request: string,
): Insight[] {
  return paths.map((file, rank) => ({
    file,
    relevance: rank === 0 ? 'high' : rank < 3 ? 'medium' : 'low',
    symbols: matchingDefinitions(leaves(definitions[file] ?? []), request, 3).map(([name, , start, end]) => ({
      name,
      start_line: start,
      end_line: end,
      change: '',
    })),
    notes: '',
  }));
}

/** The mirror's git directory, looked up as `emend eval --mirrors` does. */
const mirrorGitDir = (repo: string) => mirrorOf(MIRRORS, repo);

function checkout(inst: Instance, work: string): string {
  const dir = join(work, 'repo');
  execFileSync('git', ['clone', '-q', '--shared', '--no-checkout', mirrorGitDir(inst.repo)!, dir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  execFileSync('git', ['-C', dir, 'checkout', '-q', '--detach', inst.base_commit], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return dir;
}

interface Measured {
  lines: number;
  shown: number;
  hunks: number;
  visible: number;
  chars: number;
  goldSelected: boolean;
}

/**
 * Measures one file section (the sections of `shown`) against the gold hunks; `located` is the
 * ranking's first files, as many as the plan's.
 */
function measure(sections: string[], hunks: Hunk[], shown: string[], located: string[]): Measured {
  const byFile = new Map<string, string[]>();
  for (const s of sections) {
    const path = shown.find((p) => s.startsWith(`## ${p}\n`) || s.startsWith(`## ${p} `));
    if (path) byFile.set(path, s.split('\n'));
  }
  const m: Measured = { lines: 0, shown: 0, hunks: hunks.length, visible: 0, chars: 0, goldSelected: true };
  m.chars = sections.reduce((n, s) => n + s.length + 2, 0);
  for (const h of hunks) {
    const lines = byFile.get(h.file) ?? [];
    if (!located.includes(h.file)) m.goldSelected = false;
    const set = new Set(lines);
    for (const l of h.pre.filter((x) => x.trim())) {
      m.lines++;
      if (set.has(l)) m.shown++;
    }
    if (containsRun(lines, h.pre)) m.visible++;
  }
  return m;
}

/** A scripted re-rank: which shortlisted files the model keeps, in its order. */
interface Rerank {
  name: string;
  keep: (paths: string[]) => string[];
}

function parseRerank(spec: string): Rerank {
  const m = /^(first|last):(\d+)$/.exec(spec.trim());
  if (!m) throw new Error(`--rerank: expected first:K or last:K, got ${spec}`);
  const k = Number(m[2]);
  return {
    name: `${m[1]}:${k}`,
    keep: (paths) => (m[1] === 'first' ? paths.slice(0, k) : paths.slice(-k)),
  };
}

/** The gold hunks the fixer should be shown: in source files of the set's language, not tests. */
const sourceHunks = (patch: string, language: SetLanguage) =>
  goldHunks(patch).filter((h) => isLanguageFile(language, h.file) && !isTestFile(h.file));

async function runOne(
  inst: Instance,
  language: SetLanguage,
  o: { files: number; budget: number; before: boolean; reranks: Rerank[] },
): Promise<Map<string, Measured>> {
  const work = mkdtempSync(join(os.tmpdir(), 'emend-bench-context-'));
  const out = new Map<string, Measured>();
  try {
    const dir = checkout(inst, work);
    const located = await locate(dir, inst.problem_statement, locateOptions(o.files));
    const shortlist = shortlistOf(located.files);
    // The plan's first files of the ranking: a gold file among them counts as located.
    const paths = located.files.slice(0, o.files).map((f) => f.path);
    // What the fixer is handed, given the model's order over the shortlist (none without a re-rank).
    const handed = (reranked?: Parameters<typeof handOff>[1]) =>
      fixerFiles(handOff(located.files, reranked, o.files), o.files);
    const hunks = sourceHunks(inst.patch, language);
    const assemble = (ranked: string[], fill: string[], beyond: string[]) =>
      assembleFixerFiles({
        dir,
        paths: ranked,
        fill,
        beyond,
        insights: scriptedInsights(ranked, located.definitions, inst.problem_statement),
        definitions: located.definitions,
        budget: o.budget,
        request: inst.problem_statement,
      });
    if (o.before) {
      const insights = scriptedInsights(paths, located.definitions, inst.problem_statement);
      out.set('none', measure(oldAssembly(dir, paths, insights, o.budget), hunks, paths, paths));
    } else {
      const plain = handed(undefined);
      const shown = [...plain.selected, ...plain.fill, ...plain.beyond];
      out.set('none', measure(assemble(plain.selected, plain.fill, plain.beyond), hunks, shown, paths));
    }
    for (const r of o.reranks) {
      const ranking = r.keep(shortlist.map((f) => f.path)).map((path) => ({ path, reason: 'scripted' }));
      const applied = applyRanking(shortlist, ranking);
      if (!applied) continue;
      const { selected, fill, beyond } = handed(applied);
      out.set(`${r.name} kept`, measure(assemble(selected, [], []), hunks, selected, paths));
      const shown = [...selected, ...fill, ...beyond];
      out.set(`${r.name} fill`, measure(assemble(selected, fill, beyond), hunks, shown, paths));
    }
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The set's language: that of most of the files its patches change (as bench/locator-sets.ts decides). */
function languageOf(instances: Instance[]): SetLanguage {
  const changed = instances.flatMap((i) => changedFiles(i.patch));
  const js = changed.filter((p) => isLanguageFile('javascript', p)).length;
  const py = changed.filter((p) => isLanguageFile('python', p)).length;
  return js > py ? 'javascript' : 'python';
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      before: { type: 'boolean', default: false },
      files: { type: 'string', default: '15' },
      budget: { type: 'string', default: '120000' },
      rerank: { type: 'string', default: '' },
      only: { type: 'string' },
    },
  });
  const files = Number(values.files);
  const budget = Number(values.budget);
  const reranks = values.rerank ? values.rerank.split(',').map(parseRerank) : [];
  const instances = readFileSync(DATA, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Instance)
    .filter((i) => !values.only || i.instance_id.includes(values.only));
  const language = languageOf(instances);
  const runnable = instances.filter((i) => mirrorGitDir(i.repo));
  if (runnable.length < instances.length)
    log(`NOTICE: ${instances.length - runnable.length} instances skipped: their mirrors are not under ${MIRRORS}`);
  const measurable = runnable.filter((i) => sourceHunks(i.patch, language).length > 0);
  if (measurable.length < runnable.length)
    log(
      `NOTICE: ${runnable.length - measurable.length} instances left out: their patches change no existing ` +
        `non-test ${language} file (${runnable
          .filter((i) => !measurable.includes(i))
          .map((i) => i.instance_id)
          .join(', ')})`,
    );
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  log(
    `machine: ${cpu} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `Node ${process.version}, ${os.platform()} ${os.release()}; load ${loadAverage()}${pressure()}`,
  );
  log(`data: ${DATA} (${language}), ${measurable.length} instances`);
  log(`assembly: ${values.before ? 'before (c16a505)' : 'rank-aware'}; ${files} files, budget ${budget} characters`);
  const all = new Map<string, Measured[]>();
  for (const inst of measurable) {
    const got = await runOne(inst, language, { files, budget, before: values.before, reranks });
    const row: string[] = [];
    for (const [variant, m] of got) {
      all.set(variant, [...(all.get(variant) ?? []), m]);
      row.push(`${variant}: ${m.shown}/${m.lines} ${m.visible}/${m.hunks}`);
    }
    const located = got.get('none')?.goldSelected ? '' : '  (a gold file not located)';
    log(`  ${inst.instance_id.padEnd(40)} ${row.join('  ')}${located}`);
  }
  for (const [variant, measured] of all) {
    log('');
    log(`== ${variant === 'none' ? 'no re-rank' : `re-rank ${variant}`}`);
    report(measured);
  }
  return 0;
}

function report(all: Measured[]): void {
  const sum = (f: (m: Measured) => number) => all.reduce((n, m) => n + f(m), 0);
  const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`;
  const everyHunk = all.filter((m) => m.visible === m.hunks).length;
  const located = all.filter((m) => m.goldSelected);
  const locatedEvery = located.filter((m) => m.visible === m.hunks).length;
  log('');
  log(
    `gold lines shown: ${pct(
      sum((m) => m.shown),
      sum((m) => m.lines),
    )} ` +
      `(${sum((m) => m.shown)}/${sum((m) => m.lines)}); hunks visible: ` +
      `${pct(
        sum((m) => m.visible),
        sum((m) => m.hunks),
      )} (${sum((m) => m.visible)}/${sum((m) => m.hunks)})`,
  );
  log(`instances with every gold hunk visible: ${pct(everyHunk, all.length)} (${everyHunk}/${all.length})`);
  log(
    `  of the ${located.length} whose gold files were all located: ${pct(locatedEvery, located.length)} ` +
      `(${locatedEvery}/${located.length})`,
  );
  log(`median section size: ${[...all.map((m) => m.chars)].sort((a, b) => a - b)[Math.floor(all.length / 2)]} chars`);
}

// Run when invoked, not when imported (a test or a script may use goldHunks and scriptedInsights).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await main();
