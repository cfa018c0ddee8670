/**
 * `npm run bench:eval-pipeline`: `emend eval` in model mode on real SWE-bench instances, with a
 * scripted model replaying one of three answers per instance (test/support/eval-replay.ts:
 * `gold`, the gold patch with the test patch; `tests`, the test patch alone; `wrong`, the test
 * patch with a change in the right place that fixes nothing), one eval run each (`--answers`).
 * What it measures is the pipeline around the model:
 * - resolved: the gold answer made by the fixer step and judged; against the oracle's figure,
 *   any difference is the pipeline's (an edit path or checkout problem), not a model's;
 * - gold file located: the deterministic locator alone, over the files the fixer is given;
 * - the validator's verdict against the judge's on real repositories;
 * - input tokens per step: the real prompts' sizes, i.e. the input side of a real model's cost
 *   (output tokens here are the scripted answers', not a model's);
 * - wall time per step, the validator's test runs included.
 *
 * With `--fixer agent` the fixer is the tool-using agent (docs/agent.md), answered by a scripted
 * agent (test/support/eval-agent-replay.ts) that explores, applies the gold patch and the test
 * patch with the editor, runs the changed tests and submits (`--answers gold` only); the results
 * add its turns and tool calls per instance.
 *
 *   npm run bench:eval-pipeline -- [--dataset F] [--ids id,id] [--limit N] [--mirrors DIR] [--setup F]
 *                                  [--answers gold,tests,wrong] [--fixer pipeline|agent] [--plan free|pro|scale]
 *                                  [--attempts wrong,gold,wrong] [--concurrency K] [--out DIR] [--resume]
 *
 * `--attempts K1,K2,…` runs each task with that many fixer attempts (docs/agent.md, "Attempts"),
 * attempt i answering with kind Ki (`--answers` is then not used): one eval run, in OUT/attempts.
 *
 * Without --setup, environments are built as tasks build them (detected install, cache).
 * --resume continues the runs in --out (each answer kind's results.jsonl), as `emend eval --resume`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { evalCommand } from '../src/cli/eval.js';
import { readDataset } from '../src/eval/dataset.js';
import { agentAnswerer } from '../test/support/eval-agent-replay.js';
import { type AnswerKind, KINDS, answerer, attemptsAnswerer } from '../test/support/eval-replay.js';
import { attemptTemperatures } from '../src/steps/fix/attempts.js';
import { startScriptedModel } from '../test/support/scripted-model/server.js';

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
    fixer: { type: 'string', default: 'pipeline' },
    resume: { type: 'boolean', default: false },
    plan: { type: 'string' },
    attempts: { type: 'string' },
  },
});

async function main() {
  const all = await readDataset(v.dataset!);
  const ids = v.ids?.split(',').map((s) => s.trim());
  const chosen = ids ? all.filter((i) => ids.includes(i.instance_id)) : all;
  const instances = v.limit ? chosen.slice(0, Number(v.limit)) : chosen;
  const perAttempt = v.attempts?.split(',').map((k) => k.trim()) as AnswerKind[] | undefined;
  const kinds = perAttempt ? (['attempts'] as const) : (v.answers!.split(',').map((k) => k.trim()) as AnswerKind[]);
  const unknown = [...(perAttempt ?? kinds)].filter((k) => !KINDS.includes(k as AnswerKind));
  if (unknown.length) throw new Error(`--answers: unknown ${unknown.join(', ')} (gold, tests, wrong)`);
  if (v.fixer !== 'pipeline' && v.fixer !== 'agent') throw new Error('--fixer: pipeline or agent');
  const agent = v.fixer === 'agent';
  if (agent && kinds.some((k) => k !== 'gold'))
    throw new Error('--fixer agent replays the gold answer only (--answers gold)');
  const work = mkdtempSync(join(tmpdir(), 'emend-bench-eval-'));
  const model = await startScriptedModel({ validKeys: [KEY] });
  try {
    const dataset = join(work, 'instances.jsonl');
    writeFileSync(dataset, `${instances.map((i) => JSON.stringify(i)).join('\n')}\n`);
    const setup = v.setup ? ['--setup', v.setup] : [];
    for (const kind of kinds) {
      model.respond(
        agent
          ? agentAnswerer(v.mirrors!, instances)
          : perAttempt
            ? attemptsAnswerer(v.mirrors!, instances, perAttempt, attemptTemperatures(0, perAttempt.length))
            : answerer(v.mirrors!, instances, kind as AnswerKind),
      );
      const out = join(v.out!, kind);
      const args = [
        ...['--dataset', dataset, '--mirrors', v.mirrors!, ...setup, '--concurrency', v.concurrency!],
        ...['--fixer', v.fixer!, ...(v.resume ? ['--resume'] : []), ...(v.plan ? ['--plan', v.plan] : [])],
        ...(perAttempt ? ['--attempts', String(perAttempt.length)] : []),
      ];
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
