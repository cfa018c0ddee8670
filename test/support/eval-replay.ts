import { execFileSync } from 'node:child_process';
import { editsFromUnifiedDiff, formatEdits } from '../../src/edits/from-diff.js';
import type { Edit } from '../../src/edits/types.js';
import { mirrorGitDir } from '../../src/eval/checkout.js';
import type { Instance } from '../../src/eval/dataset.js';
import { type ThinkingStep, stepOf } from './fix-script.js';
import type { ModelRequest, Reply } from './scripted-model/server.js';

/**
 * The scripted model replaying an answer per instance of a real data set through the whole fix
 * pipeline (bench/eval-pipeline.ts, `npm run demo -- --eval --dataset …`): the planner, re-rank
 * and inspector add nothing (no likely files, the deterministic order kept, no insights); the
 * fixer answers with one of three changes, converted to the edit format against the files at
 * the base commit (read from the mirror):
 * - `gold`: the instance's gold patch with its test_patch (the fixer adds a reproduction test,
 *   as it is asked to);
 * - `tests`: the test_patch alone, a change that fixes nothing;
 * - `wrong`: the test_patch with a wrong change: the gold patch's first file edited where the
 *   gold patch edits it, by a comment line, so the change touches the right place and fixes nothing.
 * A failed validation asks the fixer again (the plan's retries): those answers add a text file
 * of their own (`emend-bench-round-N.txt`), so the change's behaviour stays the answer's and the
 * last verdict is the validator's on it.
 */

export type AnswerKind = 'gold' | 'tests' | 'wrong';
export const KINDS: readonly AnswerKind[] = ['gold', 'tests', 'wrong'];

/** A repository file's text at the base commit, or undefined when there is none. */
export type ReadBase = (path: string) => string | undefined;

/** A file at the instance's base commit, read from the mirror. */
export function readerAtBase(mirrors: string, instance: Instance): ReadBase {
  const gitDir = mirrorGitDir(mirrors, instance.repo);
  return (path) => {
    if (!gitDir) return undefined;
    try {
      return execFileSync('git', ['--git-dir', gitDir, 'show', `${instance.base_commit}:${path}`], {
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
        // A file the commit does not have is an answer (undefined), not an error to print.
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    } catch {
      return undefined;
    }
  };
}

/** A comment line in the file's language, which changes no behaviour. */
const comment = (path: string) =>
  `${/\.(py|rb|sh|ya?ml|toml)$/.test(path) ? '#' : '//'} emend bench: a change in the right place that fixes nothing`;

/** The kind's answer: edit blocks against the files at the base commit. */
function kindAnswer(mirrors: string, instance: Instance, kind: AnswerKind): string {
  const read = readerAtBase(mirrors, instance);
  const tests = editsFromUnifiedDiff(instance.test_patch, read).edits;
  if (kind === 'tests') return `A reproduction test only.\n\n${formatEdits(tests)}`;
  const gold = editsFromUnifiedDiff(instance.patch, read).edits;
  if (kind === 'gold') return `The accepted fix, with a reproduction test.\n\n${formatEdits([...gold, ...tests])}`;
  const first = gold.find((e) => e.kind === 'replace');
  const wrong: Edit[] =
    first?.kind === 'replace' ? [{ ...first, replace: `${comment(first.path)}\n${first.search}` }] : [];
  return `A wrong change, with a reproduction test.\n\n${formatEdits([...wrong, ...tests])}`;
}

/** A later fixer answer (after a failed validation): a file of its own, leaving the change's behaviour as it was. */
const roundAnswer = (round: number) =>
  `No further change to the code.\n\n${formatEdits([{ kind: 'create', path: `emend-bench-round-${round}.txt`, content: 'round\n' }])}`;

/** Which instance a request is about: the one whose problem statement's start the prompt quotes. */
export const instanceOf = (instances: Instance[], req: ModelRequest) =>
  instances.find((i) => req.text.includes(i.problem_statement.trim().slice(0, 160)));

/** The planner's, re-rank's and inspector's answers: they add nothing (no likely files, the deterministic order kept, no insights). */
export function structuredAnswer(step: Exclude<ThinkingStep, 'fixer'>): Reply {
  switch (step) {
    case 'planner':
      return {
        json: {
          summary: 'Fix the issue.',
          steps: ['Fix the issue.'],
          likely_files: [],
          new_files: [],
          test_strategy: '',
          risks: [],
        },
      };
    case 'locator':
      // Naming no file keeps the deterministic order.
      return { json: { ranking: [] } };
    case 'inspector':
      return { json: { summary: 'No notes.', insights: [] } };
  }
}

export function answerer(
  mirrors: string,
  instances: Instance[],
  kind: AnswerKind,
): (req: ModelRequest) => Reply | undefined {
  const fixerCalls = new Map<string, number>();
  return (req) => {
    const instance = instanceOf(instances, req);
    const step = stepOf(req);
    switch (step) {
      case 'planner':
      case 'locator':
      case 'inspector':
        return structuredAnswer(step);
      case 'fixer': {
        if (!instance) return { status: 400, body: 'bench: no instance for this prompt' };
        const n = fixerCalls.get(instance.instance_id) ?? 0;
        fixerCalls.set(instance.instance_id, n + 1);
        return { text: n === 0 ? kindAnswer(mirrors, instance, kind) : roundAnswer(n) };
      }
      default:
        return undefined;
    }
  };
}

/**
 * `bench:eval-pipeline --attempts wrong,gold,wrong`: the fixer's first answer in each attempt is
 * that attempt's kind, told apart by the temperature its calls carry (the attempts' temperatures,
 * src/steps/fix/attempts.ts); a retry after a failed verdict (its prompt says so) adds a file of
 * its own, as `answerer`'s later rounds do.
 */
export function attemptsAnswerer(
  mirrors: string,
  instances: Instance[],
  kinds: AnswerKind[],
  temperatures: number[],
): (req: ModelRequest) => Reply | undefined {
  const retries = new Map<string, number>();
  return (req) => {
    const step = stepOf(req);
    if (step !== 'fixer') return step ? structuredAnswer(step) : undefined;
    const instance = instanceOf(instances, req);
    if (!instance) return { status: 400, body: 'bench: no instance for this prompt' };
    if (req.text.includes('did not pass validation')) {
      const n = (retries.get(instance.instance_id) ?? 0) + 1;
      retries.set(instance.instance_id, n);
      return { text: roundAnswer(n) };
    }
    const at = temperatures.indexOf((req.body as { temperature?: number }).temperature ?? temperatures[0]!);
    return { text: kindAnswer(mirrors, instance, kinds[Math.max(0, at)] ?? kinds[0]!) };
  };
}
