/**
 * `npm run demo`: one whole fix task, locally, with no provider account and no code host.
 * A small Python repository is served by the fake GitHub, the scripted model stands in for
 * OpenAI, and the real service (API, worker, sandboxed validator) runs on a temporary data
 * dir. The account is on the pro plan with its code host connected, so the task ends in a pull
 * request on the fake GitHub. The task's live log stream is printed as it happens, then the diff
 * and the pull request.
 *
 * `npm run demo -- --keep`: the same, then the service, the fake GitHub and the scripted model
 * stay up (until Ctrl-C) and the demo prints a token, the panel's address and the `emend login`
 * line, to click through the finished task, its gates and its pull request.
 *
 * `npm run demo -- --eval`: `emend eval` in model mode on two SWE-bench-style instances built
 * here (a Python/pytest and a JS/node:test repository, as local mirrors), the scripted model
 * answering every step; prints the run's progress and its summary.md.
 *
 * `npm run demo -- --eval --dataset F --ids ID[,ID] --mirrors DIR`: the same on real instances
 * of a data set (their repositories' mirrors in DIR, environments built as tasks build them),
 * the scripted model replaying each one's accepted fix with its test patch as the fixer's answer
 * (test/support/eval-replay.ts), e.g. a dayjs instance of ../shared/bench/js-swe-dev.jsonl.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/accounts/accounts.js';
import { panelDir } from '../src/http/routes/panel.js';
import { connectScm } from '../src/workspaces/scm-connection.js';
import { evalCommand } from '../src/cli/eval.js';
import { type Instance, readDataset } from '../src/eval/dataset.js';
import { answerer } from '../test/support/eval-replay.js';
import { startLocalService } from './local-service.js';
import { buildInstance, jsSpec, pythonSpec, removeEvalRepos, writeDataset } from '../test/support/eval-instances.js';
import { scriptEvalRun } from '../test/support/eval-script.js';
import { CALC_PROMPT, CALC_REPO, scriptCalcRun } from '../test/support/fix-script.js';
import { startFakeGitHub } from '../test/support/fake-github/server.js';
import { startScriptedModel } from '../test/support/scripted-model/server.js';
import { mustOpen, openSse } from '../test/support/sse-client.js';

const KEY = 'sk-demo-scripted-model';

async function main() {
  const keep = process.argv.includes('--keep');
  const github = await startFakeGitHub();
  // The demo's person on the fake GitHub, allowed to push to acme/calc: the pull request is theirs.
  const person = github.addUser('demo-user');
  github.createRepo('acme', 'calc', { files: CALC_REPO, collaborators: [person.login] });
  const model = await startScriptedModel({ validKeys: [KEY] });
  scriptCalcRun(model);
  const service = await startLocalService({
    prefix: 'emend-demo-',
    github,
    openai: { key: KEY, baseUrl: model.urls.openai },
  });
  const { server } = service;
  try {
    // pro with credits: a managed task in pull-request mode (free runs previews, which open none).
    const { token, workspace } = await createAccount(server.deps, {
      email: 'demo@example.com',
      plan: 'pro',
      credits: 5,
    });
    await connectScm(server.deps, workspace.id, person.token);
    const headers = { authorization: `Bearer ${token.secret}`, 'content-type': 'application/json' };
    const repoUrl = `${github.webUrl}/acme/calc`;
    console.log(`emend demo: service at ${server.url}, repository ${repoUrl}, model: scripted (OpenAI wire format)\n`);
    console.log(`POST /v1/tasks  {"prompt": "${CALC_PROMPT}"}`);
    const created = await fetch(`${server.url}/v1/tasks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ prompt: CALC_PROMPT, repo_url: repoUrl }),
    });
    const task = (await created.json()) as { id: string; mode: string };
    console.log(`→ ${created.status} task ${task.id} (mode ${task.mode})\n`);
    const stream = mustOpen(
      await openSse(`${server.url}/v1/tasks/${task.id}/logs/stream`, {
        headers: { authorization: headers.authorization },
      }),
    );
    let from = 0;
    for (;;) {
      const item = await stream.waitFor((i) => i.kind === 'event', 180_000, from);
      from = stream.items.indexOf(item) + 1;
      if (item.kind !== 'event') continue;
      const data = JSON.parse(item.data) as { step: string; status: string; output?: StepOutput };
      if (item.event === 'log') {
        const extra = data.status === 'running' ? '' : ` ${summarise(data.step, data.output ?? {})}`;
        console.log(`  [${data.step}] ${data.status}${extra}`);
      } else if (item.event === 'end') {
        console.log(`\ntask ${data.status}`);
        break;
      }
    }
    stream.close();
    const final = (await (await fetch(`${server.url}/v1/tasks/${task.id}`, { headers })).json()) as {
      task: {
        status: string;
        tokens_total: number;
        cost_usd: number;
        diff_summary: string | null;
        pr_url: string | null;
      };
    };
    console.log(
      `tokens ${final.task.tokens_total}, cost $${final.task.cost_usd.toFixed(6)} (priced as ` +
        `gpt-4.1)\n\ndiff:\n${final.task.diff_summary ?? '(none)'}`,
    );
    console.log(`pull request: ${final.task.pr_url ?? '(none)'} (on the fake GitHub)`);
    if (final.task.status !== 'done') process.exitCode = 1;
    if (keep) await keepRunning(server.url, token.secret, task.id, repoUrl);
  } finally {
    await service.close();
    await model.close();
    await github.close();
  }
}

/** `--keep`: what to open and type, then wait for Ctrl-C (or SIGTERM) before closing everything. */
async function keepRunning(url: string, token: string, taskId: string, repoUrl: string) {
  const panel = panelDir()
    ? `${url}/app/`
    : `${url}/app/ (not built yet: run npm run build:web in another terminal, then reload)`;
  console.log(
    [
      '',
      'The service, the fake GitHub and the scripted model keep running (--keep). Ctrl-C stops them.',
      `  panel:  ${panel}`,
      `  token:  ${token}   (paste it at the panel's sign-in)`,
      `  task:   ${url}/app/tasks/${taskId}`,
      `  CLI:    echo ${token} | npx emend login --server ${url}`,
      `          npx emend task list; npx emend task create --repo ${repoUrl} --prompt-file F --manual --follow`,
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  console.log('\nstopping');
}

/** The fields of the steps' outputs the demo prints. */
interface StepOutput {
  error?: string;
  reason?: string;
  summary?: string;
  selected?: string[];
  files_changed?: { path: string }[];
  rounds?: number;
  passed?: boolean;
  fixed?: string[];
  command?: string;
  pr_url?: string;
}

function summarise(step: string, o: StepOutput): string {
  if (o.error) return `— ${o.error}`;
  if (o.reason) return `— ${o.reason}`;
  if (step === 'planner') return `— ${o.summary}`;
  if (step === 'locator') return `— ${(o.selected ?? []).join(', ')}`;
  if (step === 'inspector') return `— ${o.summary}`;
  if (step === 'fixer') return `— ${(o.files_changed ?? []).map((f) => f.path).join(', ')} in ${o.rounds} answer(s)`;
  if (step === 'validator')
    return `— passed: ${o.passed}, fixed: ${(o.fixed ?? []).join(', ') || 'none'} (${o.command})`;
  if (step === 'pr') return `— ${o.pr_url}`;
  return '';
}

/** The real instances `--dataset F --ids A,B --mirrors DIR` name, or undefined without --dataset. */
async function realInstances(): Promise<{ instances: Instance[]; mirrors: string } | undefined> {
  const { values } = parseArgs({
    options: {
      eval: { type: 'boolean' },
      dataset: { type: 'string' },
      ids: { type: 'string' },
      mirrors: { type: 'string' },
    },
  });
  if (!values.dataset) return undefined;
  const ids = values.ids?.split(',').map((id) => id.trim());
  const all = await readDataset(values.dataset);
  const instances = ids ? all.filter((i) => ids.includes(i.instance_id)) : all.slice(0, 1);
  if (instances.length === 0) throw new Error(`no instance of ${values.dataset} is named by --ids ${values.ids}`);
  return { instances, mirrors: values.mirrors ?? '/work/.mirror' };
}

/** `emend eval` (model mode) against the scripted model, on the built-in instances or real ones; exits with its code. */
async function evalDemo() {
  const root = mkdtempSync(join(tmpdir(), 'emend-demo-eval-'));
  const model = await startScriptedModel({ validKeys: [KEY] });
  try {
    const real = await realInstances();
    const dataset = join(root, 'instances.jsonl');
    let mirrors = join(root, 'mirrors');
    if (real) {
      mirrors = real.mirrors;
      model.respond(answerer(mirrors, real.instances, 'gold'));
      writeDataset(dataset, real.instances);
    } else {
      scriptEvalRun(model);
      writeDataset(dataset, [
        buildInstance(mirrors, 'acme__pycalc-1', pythonSpec),
        buildInstance(mirrors, 'acme__jscalc-1', jsSpec),
      ]);
    }
    const out = join(root, 'out');
    console.log(`emend demo --eval: emend eval --dataset ${dataset} --mirrors ${mirrors} --out ${out}\n`);
    const code = await evalCommand(['--dataset', dataset, '--mirrors', mirrors, '--out', out], {
      ...process.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      EMEND_DATA_DIR: join(root, 'data'),
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: model.urls.openai,
    });
    console.log(`\n${readFileSync(join(out, 'summary.md'), 'utf8')}`);
    process.exitCode = code;
  } finally {
    await model.close();
    removeEvalRepos();
    rmSync(root, { recursive: true, force: true });
  }
}

(process.argv.includes('--eval') ? evalDemo() : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
