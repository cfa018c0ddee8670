/**
 * `npm run bench:eval-pipeline`: `emend eval` in model mode on real SWE-bench instances, with a
 * scripted model whose fixer answers with the instance's gold patch (converted to the edit
 * format) and whose planner, re-rank and inspector add nothing (no likely files, the
 * deterministic order kept, no insights). What it measures is the pipeline around the model:
 * - resolved: the gold answer made by the fixer step and judged; against the oracle's figure,
 *   any difference is the pipeline's (an edit path or checkout problem), not a model's;
 * - gold file located: the deterministic locator alone, over the files the fixer is given;
 * - the validator's verdict against the judge's on real repositories;
 * - input tokens per step: the real prompts' sizes, i.e. the input side of a real model's cost
 *   (output tokens here are the scripted answers', not a model's);
 * - wall time per step, the validator's test runs included.
 *
 *   npm run bench:eval-pipeline -- [--dataset F] [--ids id,id] [--mirrors DIR] [--setup F]
 *                                  [--concurrency K] [--out DIR]
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
import { stepOf } from '../test/support/fix-script.js';
import { type ModelRequest, type Reply, startScriptedModel } from '../test/support/scripted-model/server.js';

const KEY = 'sk-bench-eval-pipeline';
const ROOT = resolve(import.meta.dirname, '..');

const { values: v } = parseArgs({
  options: {
    dataset: { type: 'string', default: '/work/shared/bench/swe-lite-eval.jsonl' },
    ids: { type: 'string' },
    mirrors: { type: 'string', default: '/work/.mirror' },
    setup: { type: 'string', default: resolve(ROOT, 'bench/eval-setup.debian12.json') },
    concurrency: { type: 'string', default: '2' },
    out: { type: 'string', default: resolve('emend-eval-pipeline') },
  },
});

/** The gold patch as the fixer's answer: edit blocks against the files at the base commit, read from the mirror. */
function goldAnswer(instance: Instance): string {
  const gitDir = mirrorGitDir(v.mirrors!, instance.repo);
  const read = (path: string) => {
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
  return `The accepted fix.\n\n${formatEdits(editsFromUnifiedDiff(instance.patch, read).edits)}`;
}

/** Which instance a request is about: the one whose problem statement's start the prompt quotes. */
const instanceOf = (instances: Instance[], req: ModelRequest) =>
  instances.find((i) => req.text.includes(i.problem_statement.trim().slice(0, 160)));

function answer(instances: Instance[], req: ModelRequest): Reply | undefined {
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
    case 'fixer':
      return instance ? { text: goldAnswer(instance) } : { status: 400, body: 'bench: no instance for this prompt' };
    default:
      return undefined;
  }
}

async function main() {
  const all = await readDataset(v.dataset!);
  const ids = v.ids?.split(',').map((s) => s.trim());
  const instances = ids ? all.filter((i) => ids.includes(i.instance_id)) : all;
  const work = mkdtempSync(join(tmpdir(), 'emend-bench-eval-'));
  const model = await startScriptedModel({ validKeys: [KEY] });
  model.respond((req) => answer(instances, req));
  try {
    const dataset = join(work, 'instances.jsonl');
    writeFileSync(dataset, `${instances.map((i) => JSON.stringify(i)).join('\n')}\n`);
    const args = ['--dataset', dataset, '--mirrors', v.mirrors!, '--setup', v.setup!];
    const code = await evalCommand([...args, '--concurrency', v.concurrency!, '--out', v.out!], {
      ...process.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      EMEND_SANDBOX: process.env.EMEND_SANDBOX ?? 'bubblewrap',
      EMEND_DATA_DIR: process.env.EMEND_DATA_DIR ?? join(work, 'data'),
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: model.urls.openai,
    });
    console.log(`\n${readFileSync(join(v.out!, 'summary.md'), 'utf8')}`);
    process.exitCode = code;
  } finally {
    await model.close();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
