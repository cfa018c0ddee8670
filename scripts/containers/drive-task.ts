/**
 * The host side of `npm run test:containers` (scripts/containers/test-containers.sh): the fake
 * GitHub and the scripted model on this machine's loopback, then one fix task driven through the
 * containers' API to a pull request on the fake GitHub.
 *
 *   tsx scripts/containers/drive-task.ts DIR
 *
 * Writes DIR/fakes.env (the code host's and the model's addresses, for the compose override),
 * then waits for DIR/service.json ({"url", "token"}: the API node and an account's token, once
 * the containers answer) and drives the task: connects the account to the fake GitHub, creates
 * the task, waits for it to end, and checks the pull request the fake GitHub holds. Exits 0 when
 * the task is done with a pull request opened there, 1 otherwise.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CALC_PROMPT, CALC_REPO, scriptCalcRun } from '../../test/support/fix-script.js';
import { startFakeGitHub } from '../../test/support/fake-github/server.js';
import { startScriptedModel } from '../../test/support/scripted-model/server.js';

const KEY = 'sk-proof-scripted-model';
const WAIT_FOR_SERVICE_MS = 15 * 60_000;
const WAIT_FOR_TASK_MS = 10 * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(1_000);
  }
}

async function main() {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: drive-task.ts DIR');
  const github = await startFakeGitHub();
  const person = github.addUser('proof-user');
  github.createRepo('acme', 'calc', { files: CALC_REPO, collaborators: [person.login] });
  const model = await startScriptedModel({ validKeys: [KEY] });
  scriptCalcRun(model);
  try {
    writeFileSync(
      join(dir, 'fakes.env'),
      [
        `EMEND_SCM_WEB_URL=${github.webUrl}`,
        `EMEND_SCM_API_URL=${github.apiUrl}`,
        `OPENAI_API_KEY=${KEY}`,
        `OPENAI_BASE_URL=${model.urls.openai}`,
        '',
      ].join('\n'),
    );
    console.log(`fakes: GitHub ${github.webUrl}, model ${model.urls.openai}`);

    const servicePath = join(dir, 'service.json');
    const service = await until('the service (service.json)', WAIT_FOR_SERVICE_MS, () =>
      existsSync(servicePath)
        ? (JSON.parse(readFileSync(servicePath, 'utf8')) as { url: string; token: string })
        : undefined,
    );
    const headers = { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' };
    const connected = await fetch(`${service.url}/v1/me/scm`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ token: person.token }),
    });
    if (!connected.ok) throw new Error(`POST /v1/me/scm: ${connected.status} ${await connected.text()}`);

    const repoUrl = `${github.webUrl}/acme/calc`;
    const created = await fetch(`${service.url}/v1/tasks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ prompt: CALC_PROMPT, repo_url: repoUrl }),
    });
    if (created.status !== 201) throw new Error(`POST /v1/tasks: ${created.status} ${await created.text()}`);
    const { id } = (await created.json()) as { id: string };
    const started = Date.now();
    console.log(`task ${id} on ${repoUrl}`);

    let last = '';
    const task = await until('the task to end', WAIT_FOR_TASK_MS, async () => {
      const res = await fetch(`${service.url}/v1/tasks/${id}`, { headers });
      const body = (await res.json()) as {
        task: { status: string; current_step?: string | null; pr_url: string | null; error?: unknown };
      };
      const now = `${body.task.status}${body.task.current_step ? ` (${body.task.current_step})` : ''}`;
      if (now !== last) console.log(`  ${now}`);
      last = now;
      return ['done', 'failed', 'cancelled'].includes(body.task.status) ? body.task : undefined;
    });
    const pulls = github.pulls('acme', 'calc');
    console.log(
      `task ${task.status} in ${((Date.now() - started) / 1000).toFixed(1)} s; pull request ${task.pr_url ?? '(none)'}; ` +
        `the fake GitHub holds ${pulls.length} pull request(s) on acme/calc`,
    );
    if (task.status !== 'done' || !task.pr_url || pulls.length !== 1) {
      // The task and its step logs (GET /v1/tasks/{id} has both): why it ended so.
      const full = await fetch(`${service.url}/v1/tasks/${id}`, { headers });
      console.log(JSON.stringify(await full.json(), null, 1).slice(0, 6000));
      process.exitCode = 1;
    }
  } finally {
    await model.close();
    await github.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
