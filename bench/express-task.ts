/**
 * `npm run bench:express-task -- MIRROR [COMMIT]`: POST → pull request on a real project.
 *
 * expressjs/express at a3714473 with a one-line bug in res.sendStatus, served by the fake
 * GitHub; the scripted model answers every step at once with the fix (an "instant model"); the
 * real service (API, worker, sandboxed validator with setup through the egress proxy, the
 * environment cache, kept baselines) runs on a fresh data dir. The first task builds the
 * environment (cold); BENCH_RUNS more (5) on the same base commit find it cached (warm), and the
 * base commit's test run kept. Then BENCH_RUNS tasks whose fixer first answers a change that
 * breaks another test ("should work with unknown code"), so the validator fails it and the fixer
 * retries: the retry's validation. Prints the time from POST to the pull request of each (to the
 * task's finished_at; the poll saw it up to a tenth of a second later), the
 * validator's setup and validation times, the medians, and the machine.
 *
 * MIRROR: a clone or bare mirror of expressjs/express (the search tools' `fetch` brings one).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createAccount } from '../src/accounts/accounts.js';
import { connectScm } from '../src/workspaces/scm-connection.js';
import { startLocalService } from '../scripts/local-service.js';
import { startFakeGitHub } from '../test/support/fake-github/server.js';
import { editBlock, stepOf } from '../test/support/fix-script.js';
import { startScriptedModel } from '../test/support/scripted-model/server.js';
import os from 'node:os';

const KEY = 'sk-bench-scripted-model';
const FILE = 'lib/response.js';
const GOOD = '  var body = statuses.message[statusCode] || String(statusCode)';
const BUG = '  var body = String(statusCode)';
/** The retry runs' first answer: the status message dropped for every code, "599" answered as "599!". */
const WRONG = "  var body = String(statusCode) + '!'";
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const PROMPT = 'res.sendStatus(201) answers the body "201" instead of "Created": send the status message as the body';

/** The tree of a commit as text files (files holding a NUL byte, images and the like, are left out). */
function filesAt(mirror: string, commit: string): Record<string, string> {
  const git = (args: string[]) => execFileSync('git', ['--git-dir', gitDir(mirror), ...args], { maxBuffer: 1 << 28 });
  const files: Record<string, string> = {};
  const list = git(['ls-tree', '-r', '-z', '--name-only', commit]).toString('utf8').split('\0').filter(Boolean);
  for (const path of list) {
    const body = git(['show', `${commit}:${path}`]);
    if (body.includes(0)) continue;
    files[path] = body.toString('utf8');
  }
  return files;
}

/** The git directory of a clone or a bare mirror. */
function gitDir(mirror: string): string {
  const found = execFileSync('git', ['-C', mirror, 'rev-parse', '--git-dir'], { encoding: 'utf8' }).trim();
  return found.startsWith('/') ? found : join(mirror, found);
}

interface TaskView {
  status: string;
  pr_url: string | null;
  finished_at: string | null;
}
type LogView = {
  step: string;
  status: string;
  output?: Record<string, unknown>;
  duration_ms?: number | null;
  created_at: string;
};

const machine = () =>
  `machine: ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'} × ${os.cpus().length}, ` +
  `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}, node ${process.version}; load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;

async function main() {
  const [mirror, commit = 'a3714473'] = process.argv.slice(2);
  if (!mirror) throw new Error('usage: npm run bench:express-task -- MIRROR [COMMIT]');
  const files = filesAt(mirror, commit);
  if (files[FILE]?.includes(GOOD) !== true) throw new Error(`${FILE} at ${commit} does not hold the line to break`);
  files[FILE] = files[FILE].replace(GOOD, BUG);

  const github = await startFakeGitHub();
  github.createRepo('expressjs', 'express', { files });
  const model = await startScriptedModel({ validKeys: [KEY] });
  let retrying = false;
  let fixerCalls = 0;
  model.respond((req) => {
    switch (stepOf(req)) {
      case 'planner':
        return {
          json: {
            summary: 'Send the status message as the body of res.sendStatus.',
            steps: [`In ${FILE}, sendStatus: use statuses.message[statusCode] with String(statusCode) as fallback.`],
            likely_files: [FILE],
            new_files: [],
            test_strategy: 'npm test; test/res.sendStatus.js covers it.',
            risks: [],
          },
        };
      case 'locator':
        return { json: { ranking: [{ path: FILE, reason: 'defines res.sendStatus' }] } };
      case 'inspector':
        return {
          json: {
            summary: `sendStatus in ${FILE} sends String(statusCode) as the body.`,
            insights: [{ file: FILE, relevance: 'high', symbols: [], notes: '' }],
          },
        };
      case 'fixer':
        // A retry run's first answer breaks another test; the tasks run one after another.
        fixerCalls += 1;
        if (retrying && fixerCalls === 1) return { text: `Send the code.\n\n${editBlock(BUG, WRONG, FILE)}` };
        // The retry edits the tree its first answer left.
        if (retrying) return { text: `Use the status message.\n\n${editBlock(WRONG, GOOD, FILE)}` };
        return { text: `Use the status message.\n\n${editBlock(BUG, GOOD, FILE)}` };
      default:
        return undefined;
    }
  });
  const service = await startLocalService({
    prefix: 'emend-bench-express-',
    github,
    openai: { key: KEY, baseUrl: model.urls.openai },
  });
  const { server } = service;
  try {
    console.log(machine());
    const { account, token } = await createAccount(server.deps, {
      email: 'bench@example.com',
      plan: 'pro',
      credits: 100,
    });
    const user = github.addUser('bencher');
    await connectScm(server.deps, account.id, user.token);
    const headers = { authorization: `Bearer ${token.secret}`, 'content-type': 'application/json' };
    const runs = ['cold', ...Array<string>(RUNS).fill('warm'), ...Array<string>(RUNS).fill('retry')];
    const figures: Record<string, { wall: number[]; validator: number[]; retryValidator: number[] }> = {};
    for (const run of runs) {
      retrying = run === 'retry';
      fixerCalls = 0;
      const started = performance.now();
      const startedAt = Date.now();
      const created = await fetch(`${server.url}/v1/tasks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ prompt: PROMPT, repo_url: `${github.webUrl}/expressjs/express` }),
      });
      const { id } = (await created.json()) as { id: string };
      let task: TaskView;
      let logs: LogView[];
      for (;;) {
        const got = await fetch(`${server.url}/v1/tasks/${id}`, { headers });
        // Polled ten times a second, the plan's rate limit may answer 429: wait and ask again.
        if (got.status === 429) {
          await new Promise((r) => setTimeout(r, 1000));
          continue;
        }
        ({ task, logs } = (await got.json()) as { task: TaskView; logs: LogView[] });
        // Where the time went: each step's record, from the POST, with its own duration.
        if (process.env.BENCH_DEBUG && ['done', 'failed'].includes(task.status))
          console.log(
            logs
              .map(
                (l) =>
                  `${l.step}:${l.status} +${((Date.parse(l.created_at) - startedAt) / 1000).toFixed(2)} s` +
                  (l.duration_ms ? ` (${(l.duration_ms / 1000).toFixed(2)} s)` : ''),
              )
              .join(', ') +
              (task.finished_at
                ? `, finished +${((Date.parse(task.finished_at) - startedAt) / 1000).toFixed(2)} s`
                : ''),
          );
        if (['done', 'failed', 'cancelled'].includes(task.status)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      // From the POST to the task's own end (its finished_at, the same machine's clock): the poll's
      // tenth of a second and a rate limit's wait are not the service's time.
      const polled = (performance.now() - started) / 1000;
      const seconds = task.finished_at ? (Date.parse(task.finished_at) - startedAt) / 1000 : polled;
      type ValidatorView = {
        passed?: boolean;
        duration_ms?: number;
        setup?: { duration_ms?: number; environment?: { cache?: string } };
        baseline?: { reused?: { from: string } };
        message?: string;
      };
      const validations = logs
        .filter((l) => l.step === 'validator' && (l.status === 'done' || l.status === 'failed'))
        .map((l) => l.output as ValidatorView);
      const validator = validations.at(-1);
      if (process.env.BENCH_DEBUG) for (const v of validations) if (v.message) console.log(`  validator: ${v.message}`);
      const seconds_ = (ms: number | undefined) => ((ms ?? 0) / 1000).toFixed(1);
      console.log(
        `${run}: ${task.status} in ${seconds.toFixed(2)} s from POST to ${task.pr_url ? 'the pull request' : 'the end (no PR)'} ` +
          `(seen by the poll at ${polled.toFixed(2)} s); ` +
          validations
            .map(
              (v, k) =>
                `validation ${k + 1}: passed ${v.passed}, ${seconds_(v.duration_ms)} s, setup ${seconds_(v.setup?.duration_ms)} s ` +
                `(${v.setup?.environment?.cache ?? 'no cache'}), baseline ${v.baseline?.reused ? `reused from the ${v.baseline.reused.from}` : 'ran'}`,
            )
            .join('; '),
      );
      figures[run] ??= { wall: [], validator: [], retryValidator: [] };
      const f = figures[run];
      f.wall.push(seconds);
      f.validator.push((validations[0]?.duration_ms ?? 0) / 1000);
      if (validations.length > 1) f.retryValidator.push((validator?.duration_ms ?? 0) / 1000);
    }
    const med = (xs: number[]) =>
      xs.length ? [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!.toFixed(2) : '–';
    for (const [run, f] of Object.entries(figures))
      console.log(
        `${run} (${f.wall.length}): median POST → PR ${med(f.wall)} s, first validation ${med(f.validator)} s` +
          (f.retryValidator.length ? `, the retry's validation ${med(f.retryValidator)} s` : ''),
      );
    console.log(`end: ${machine()}`);
  } finally {
    await service.close();
    await model.close();
    await github.close();
  }
}

await main();
