/**
 * `npm run bench:eval-pipeline`: `emend eval` in model mode on real SWE-bench instances, with a
 * scripted model whose planner, re-rank and inspector add nothing (no likely files, the
 * deterministic order kept, no insights) and whose fixer replays one of three answers, each
 * converted to the edit format (`--answers`, default all three, one eval run each):
 * - `gold`: the instance's gold patch with its test_patch (the fixer adds a reproduction test,
 *   as it is asked to): the validator should pass it and the judge resolve it;
 * - `tests`: the test_patch alone, a change that fixes nothing;
 * - `wrong`: the test_patch with a wrong change: the gold patch's first file edited where the
 *   gold patch edits it, by a comment line, so the change touches the right place and fixes nothing.
 * A failed validation asks the fixer again (the plan's retries): those answers add a text file
 * of their own (`emend-bench-round-N.txt`), so the change's behaviour stays the answer's and the
 * last verdict is the validator's on it. What it measures is the pipeline around the model:
 * - resolved: the gold answer made by the fixer step and judged; against the oracle's figure,
 *   any difference is the pipeline's (an edit path or checkout problem), not a model's;
 * - gold file located: the deterministic locator alone, over the files the fixer is given;
 * - the validator's verdict against the judge's on real repositories;
 * - input tokens per step: the real prompts' sizes, i.e. the input side of a real model's cost
 *   (output tokens here are the scripted answers', not a model's);
 * - wall time per step, the validator's test runs included.
 *
 *   npm run bench:eval-pipeline -- [--dataset F] [--ids id,id] [--limit N] [--mirrors DIR] [--setup F]
 *                                  [--answers gold,tests,wrong] [--concurrency K] [--out DIR]
 *
 * Without --setup, environments are built as tasks build them (detected install, cache).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { evalCommand } from '../src/cli/eval.js';
import { mirrorGitDir } from '../src/eval/checkout.js';
import { type Instance, readDataset } from '../src/eval/dataset.js';
import { editsFromUnifiedDiff, formatEdits } from '../src/edits/from-diff.js';
import type { Edit } from '../src/edits/types.js';
import { stepOf } from '../test/support/fix-script.js';
import { type ModelRequest, type Reply, startScriptedModel } from '../test/support/scripted-model/server.js';

const KEY = 'sk-bench-eval-pipeline';

const { values: v } = parseArgs({
  options: {
    dataset: { type: 'string', default: '/work/shared/bench/swe-lite-eval.jsonl' },
    ids: { type: 'string' },
    limit: { type: 'string' },
    mirrors: { type: 'string', default: '/work/.mirror' },
    setup: { type: 'string' },
    answers: { type: 'string', default: 'gold,tests,wrong' },
    concurrency: { type: 'string', default: '2' },
    out: { type: 'string', default: resolve('emend-eval-pipeline') },
  },
});

type AnswerKind = 'gold' | 'tests' | 'wrong';
const KINDS: readonly AnswerKind[] = ['gold', 'tests', 'wrong'];

/** A file at the instance's base commit, read from the mirror. */
function reader(instance: Instance): (path: string) => string | undefined {
  const gitDir = mirrorGitDir(v.mirrors!, instance.repo);
  return (path) => {
    if (!gitDir) return undefined;
    try {
      return execFileSync('git', ['--git-dir', gitDir, 'show', `${instance.base_commit}:${path}`], {
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
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
function kindAnswer(instance: Instance, kind: AnswerKind): string {
  const read = reader(instance);
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
const instanceOf = (instances: Instance[], req: ModelRequest) =>
  instances.find((i) => req.text.includes(i.problem_statement.trim().slice(0, 160)));

function answerer(instances: Instance[], kind: AnswerKind): (req: ModelRequest) => Reply | undefined {
  const fixerCalls = new Map<string, number>();
  return (req) => {
    const instance = instanceOf(instances, req);
    switch (stepOf(req)) {
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
      case 'fixer': {
        if (!instance) return { status: 400, body: 'bench: no instance for this prompt' };
        const n = fixerCalls.get(instance.instance_id) ?? 0;
        fixerCalls.set(instance.instance_id, n + 1);
        return { text: n === 0 ? kindAnswer(instance, kind) : roundAnswer(n) };
      }
      default:
        return undefined;
    }
  };
}

async function main() {
  const all = await readDataset(v.dataset!);
  const ids = v.ids?.split(',').map((s) => s.trim());
  const chosen = ids ? all.filter((i) => ids.includes(i.instance_id)) : all;
  const instances = v.limit ? chosen.slice(0, Number(v.limit)) : chosen;
  const kinds = v.answers!.split(',').map((k) => k.trim()) as AnswerKind[];
  const unknown = kinds.filter((k) => !KINDS.includes(k));
  if (unknown.length) throw new Error(`--answers: unknown ${unknown.join(', ')} (gold, tests, wrong)`);
  const work = mkdtempSync(join(tmpdir(), 'emend-bench-eval-'));
  const model = await startScriptedModel({ validKeys: [KEY] });
  try {
    const dataset = join(work, 'instances.jsonl');
    writeFileSync(dataset, `${instances.map((i) => JSON.stringify(i)).join('\n')}\n`);
    const setup = v.setup ? ['--setup', v.setup] : [];
    for (const kind of kinds) {
      model.respond(answerer(instances, kind));
      const out = join(v.out!, kind);
      const args = ['--dataset', dataset, '--mirrors', v.mirrors!, ...setup, '--concurrency', v.concurrency!];
      const code = await evalCommand([...args, '--out', out], {
        ...process.env,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
        EMEND_SANDBOX: process.env.EMEND_SANDBOX ?? 'bubblewrap',
        EMEND_DATA_DIR: process.env.EMEND_DATA_DIR ?? join(work, 'data'),
        OPENAI_API_KEY: KEY,
        OPENAI_BASE_URL: model.urls.openai,
      });
      console.log(`\n## answer: ${kind}\n\n${readFileSync(join(out, 'summary.md'), 'utf8')}`);
      if (code !== 0) process.exitCode = code;
    }
  } finally {
    await model.close();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
