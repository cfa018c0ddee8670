import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_PROMPT, CALC_REPO, GOOD_FIX, calcStepReply, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import type { ModelService } from '../support/model-service.js';
import { freePort } from '../support/ports.js';
import {
  killRemotes,
  newConfigHome,
  plain,
  remoteEnv,
  removeConfigDirs,
  runInTerminal,
  runRemote,
  startInTerminal,
  startRemote,
  startRemoteServer,
} from './remote-process.js';

/** Waits until the output so far matches; the match. */
async function waitForLine(output: () => string, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = pattern.exec(output());
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The remote commands as users run them: `emend ...` processes against the service on a real
// port, with the production steps on the scripted model and the fake GitHub as the code host.
let svc: ModelService & { url: string };

beforeAll(async () => {
  svc = await startRemoteServer();
});
afterAll(async () => {
  await killRemotes();
  await svc.close();
  removeConfigDirs();
});

/**
 * A second server that records every request and answers GET /v1/me with a profile, so that what
 * reaches it (and with which Authorization header) is seen from outside the CLI.
 */
async function startRecorder() {
  const received: { method?: string; path?: string; authorization?: string }[] = [];
  const server = createServer((req, res) => {
    received.push({ method: req.method, path: req.url, authorization: req.headers.authorization });
    if (req.url !== '/v1/me') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found","message":"no"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ email: 'b@example.test', plan: 'free', credits: 0, use_byok: false, api_keys: [] }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

const STEPS = ['planner', 'locator', 'inspector', 'fixer', 'validator', 'pr'];
const STACK = /^\s+at /m;

/** A pro account with a credit and the calc repository it may change. */
async function calcOwner(name: string) {
  const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
  svc.h.github.createRepo(name, 'calc', { files: CALC_REPO, collaborators: [owner.scm!.login] });
  return { ...owner, repo: `${svc.h.github.webUrl}/${name}/calc` };
}

describe('emend login and the saved login', { timeout: 60_000 }, () => {
  it('checks the piped token, saves it 0600 in a 0700 directory; EMEND_TOKEN overrides it', async () => {
    const { token, account } = await newAccount(svc.h, { scm: false });
    const config = newConfigHome();
    const env = remoteEnv({ config });

    const login = await runRemote(['login', '--server', `${svc.url}/`], env, `${token}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`as ${account.email}`);
    const file = join(config, 'emend', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, 'emend')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ server: svc.url, token });

    const me = await runRemote(['me', '--json'], env);
    expect(me.code, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout)).toMatchObject({ email: account.email, plan: 'free' });

    // The environment wins over the file: a revoked-looking token is refused with the server's words.
    const overridden = await runRemote(['me'], remoteEnv({ config, token: 'tk_not_a_real_token' }));
    expect(overridden.code).toBe(3);
    expect(overridden.stderr).toMatch(/^emend: .+ \(invalid_token, HTTP 401, request [\w-]+\)\n$/);
    expect(overridden.stderr).not.toMatch(STACK);
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const elsewhere = await runRemote(['me'], remoteEnv({ config, server: nobody, token: 'tk_for_nobody' }));
    expect(elsewhere.code).toBe(3);
    // the address tried is named: a wrong EMEND_SERVER or a stopped server shows at once
    expect(elsewhere.stderr).toBe(
      `emend: the emend server at ${nobody} could not be reached (network, ECONNREFUSED)\n`,
    );

    const logout = await runRemote(['logout'], env);
    expect(logout.code).toBe(0);
    expect((await runRemote(['me'], env)).code).toBe(78);
  });

  it('sends the saved token only to the server it was saved for; EMEND_TOKEN goes anywhere', async () => {
    const { token, account } = await newAccount(svc.h, { scm: false });
    const config = newConfigHome();
    expect((await runRemote(['login', '--server', svc.url], remoteEnv({ config }), `${token}\n`)).code).toBe(0);
    const other = await startRecorder();
    try {
      // Another server in EMEND_SERVER: refused before any request, naming both servers and not the token.
      for (const args of [['me'], ['task', 'list'], ['webhooks', 'list', '--json']]) {
        const refused = await runRemote(args, remoteEnv({ config, server: `${other.url}/` }));
        expect(refused.code, args.join(' ')).toBe(78);
        expect(refused.stderr).toBe(
          `emend: EMEND_SERVER is ${other.url} but the saved login is for ${svc.url}, and its token is sent ` +
            `only there: set EMEND_TOKEN for ${other.url} or run \`emend login --server ${other.url}\`\n`,
        );
        expect(refused.stdout).toBe('');
      }
      expect(other.received).toEqual([]);

      // The same server written differently (trailing slashes, the scheme in capitals) keeps the saved token.
      const same = svc.url.replace('http://', 'HTTP://');
      for (const server of [`${svc.url}/`, `${same}//`]) {
        const me = await runRemote(['me', '--json'], remoteEnv({ config, server }));
        expect(me.code, `${server}: ${me.stderr}`).toBe(0);
        expect(JSON.parse(me.stdout)).toMatchObject({ email: account.email });
      }

      // A token given explicitly goes where EMEND_SERVER says, and only it does.
      const explicit = await runRemote(['me', '--json'], remoteEnv({ config, server: other.url, token: 'tk_for_b' }));
      expect(explicit.code, explicit.stderr).toBe(0);
      expect(JSON.parse(explicit.stdout)).toMatchObject({ email: 'b@example.test' });
      expect(other.received).toEqual([{ method: 'GET', path: '/v1/me', authorization: 'Bearer tk_for_b' }]);

      // After `emend login` for the other server, its saved token goes there (and no longer to the first).
      const relogin = await runRemote(['login', '--server', other.url], remoteEnv({ config }), 'tk_saved_for_b\n');
      expect(relogin.code, relogin.stderr).toBe(0);
      const back = await runRemote(['me'], remoteEnv({ config, server: svc.url }));
      expect(back.code).toBe(78);
      expect(back.stderr).toContain(`the saved login is for ${other.url},`);
      expect((await runRemote(['me'], remoteEnv({ config }))).code).toBe(0);
      expect(other.received.map((r) => r.authorization)).toEqual([
        'Bearer tk_for_b',
        'Bearer tk_saved_for_b',
        'Bearer tk_saved_for_b',
      ]);
    } finally {
      await other.close();
    }
  });

  it('on a terminal, asks for the token at a prompt that does not show it', async () => {
    const { token, account } = await newAccount(svc.h, { scm: false });
    const config = newConfigHome();
    const run = await runInTerminal(['login', '--server', svc.url], remoteEnv({ config }), [
      { when: /Token for/, type: `${token}\r` },
    ]);
    expect(run.code, plain(run.stdout)).toBe(0);
    expect(plain(run.stdout)).toContain(`as ${account.email}`);
    expect(run.stdout).not.toContain(token);
    expect(JSON.parse(readFileSync(join(config, 'emend', 'config.json'), 'utf8')).token).toBe(token);
  });

  it('refuses a wrong token before saving anything', async () => {
    const config = newConfigHome();
    const login = await runRemote(['login', '--server', svc.url], remoteEnv({ config }), 'tk_wrong\n');
    expect(login.code).toBe(3);
    expect(login.stderr).toMatch(/\(\w+, HTTP 401, request [\w-]+\)/);
    expect(() => statSync(join(config, 'emend', 'config.json'))).toThrow();
  });
});

describe('emend task, piped', { timeout: 150_000 }, () => {
  it('create --follow prints plain lines per step, the diff and the PR, and exits 0 when done', async () => {
    scriptCalcRun(svc.model);
    const owner = await calcOwner('piped');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const run = await runRemote(['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--follow'], env);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).not.toContain('\u001b[');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^created task [0-9a-f-]{36} \(fix, pr, pending\)$/);
    for (const step of STEPS) {
      expect(lines, step).toContain(`${step} running`);
      expect(
        lines.some((l) => new RegExp(`^${step} done \\d+\\.\\ds$`).test(l)),
        step,
      ).toBe(true);
    }
    expect(run.stdout).toContain('+    return a + b');
    expect(lines.filter(Boolean).at(-1)).toMatch(new RegExp(`^done · PR ${owner.repo}/pull/1 · \\$\\d`));
  });

  it('create --fixer agent runs the agent and show names it; a fixer the plan refuses, a wrong one, and one on a scaffold are refused', async () => {
    svc.model.respond((req) => {
      if (!req.tools.includes('bash')) return calcStepReply(req);
      // The agent (the only caller with tools): one replace with the editor, then, told how it went, submit.
      if (req.messages.some((m) => m.role === 'tool'))
        return { toolCalls: [{ name: 'submit', args: { summary: 'add() adds now.' } }] };
      const replace = {
        command: 'replace',
        path: 'calc/ops.py',
        old_text: '    return a - b',
        new_text: '    return a + b',
      };
      return { toolCalls: [{ name: 'editor', args: replace }] };
    });
    const owner = await calcOwner('fixer');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const run = await runRemote(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--fixer', 'agent', '--follow'],
      env,
    );
    expect(run.code, run.stderr + run.stdout).toBe(0);
    // piped, each of the agent's turns is a line: the tool, its command or edit, how it ended
    expect(run.stdout).toMatch(/^fixer turn 1: editor replace calc\/ops\.py \(ok\)$/m);
    expect(run.stdout).toMatch(/^fixer turn 2: submit \(ok\)$/m);
    const id = /^created task ([0-9a-f-]{36})/.exec(run.stdout)![1]!;
    const show = await runRemote(['task', 'show', id], env);
    expect(show.stdout).toMatch(/^type:\s+fix \(pr, approval auto, agent fixer\)$/m);
    const json = JSON.parse((await runRemote(['task', 'show', id, '--json'], env)).stdout);
    expect(json.task.fixer).toBe('agent');
    expect(json.logs.some((l: { output: { agent_turn?: unknown } }) => l.output.agent_turn)).toBe(true);

    const free = await newAccount(svc.h, { plan: 'free' });
    const freeEnv = remoteEnv({ server: svc.url, token: free.token });
    const refused = await runRemote(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--fixer', 'agent'],
      freeEnv,
    );
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('fixer: the free plan does not offer the agent fixer (it offers: pipeline)');
    expect(JSON.parse((await runRemote(['task', 'list', '--json'], freeEnv)).stdout)).toEqual([]);
    const wrong = await runRemote(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--fixer', 'robot'],
      env,
    );
    expect(wrong.code).toBe(64);
    expect(wrong.stderr).toMatch(/--fixer.*robot.*pipeline, agent/s);
    const scaffold = await runRemote(
      ['task', 'create', '--scaffold', '--prompt', 'A bakery site', '--fixer', 'agent'],
      env,
    );
    expect(scaffold.code).toBe(64);
    expect(scaffold.stderr).toContain('a --scaffold task takes no --fixer');
  });

  it('create --attempts 3: each attempt a line as it ends, show lists them and the choice, diff --attempt reads any', async () => {
    // Attempt 2 (temperature 0.5) fixes add(); attempts 1 and 3 fix it and break mul().
    const breaksMul =
      'calc/ops.py\n```\n<<<<<<< SEARCH\ndef mul(a, b):\n    return a * b\n=======\ndef mul(a, b):\n    return a + b\n' +
      '>>>>>>> REPLACE\n```\n';
    scriptCalcRun(svc.model, (req) => {
      const temperature = (req.body as { temperature?: number }).temperature;
      return { text: temperature === 0.5 ? GOOD_FIX : `${GOOD_FIX}\n${breaksMul}` };
    });
    const owner = await calcOwner('attempts');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const run = await runRemote(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--attempts', '3', '--follow'],
      env,
    );
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(/^fixer attempt 2: passed, \+1 -1, \$\d/m);
    expect(run.stdout).toMatch(/^fixer attempt 1: did not pass \(1 new failure\(s\)\), \+2 -2/m);
    const id = /^created task ([0-9a-f-]{36})/.exec(run.stdout)![1]!;
    const show = await runRemote(['task', 'show', id], env);
    expect(show.stdout).toMatch(/^type:\s+fix \(pr, approval auto, pipeline fixer, 3 attempts\)$/m);
    expect(show.stdout).toMatch(/^\*2\s+pipeline @0\.5\s+passed\s+\+1 -1\s+\$/m);
    expect(show.stdout).toMatch(/^ 3\s+pipeline @1\s+failed \(1 new\)/m);
    expect(show.stdout).toContain('chosen: attempt 2: its validation passed (attempt 1: failed)');
    const other = await runRemote(['task', 'diff', id, '--attempt', '3'], env);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toContain('+    return a + b\n');
    expect(other.stdout).toMatch(/def mul[\s\S]*\+ {4}return a \+ b/);
    const refused = await runRemote(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--attempts', '4'],
      env,
    );
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('attempts: the pro plan allows at most 3 attempts per task (asked for 4)');
    const scaffold = await runRemote(
      ['task', 'create', '--scaffold', '--prompt', 'A bakery site', '--attempts', '2'],
      env,
    );
    expect(scaffold.code).toBe(64);
    expect(scaffold.stderr).toContain('a --scaffold task takes no --attempts');
  });

  it('piped, a gate is a line saying how to approve; approve and kill from another command; exit 2', async () => {
    scriptCalcRun(svc.model);
    const owner = await calcOwner('gated');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const follow = startRemote(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--manual', '--follow'],
      env,
    );
    const id = (await waitForLine(follow.output, /^created task (\S+) /m))[1]!;
    await waitForLine(
      follow.output,
      new RegExp(`^task awaiting_plan: approve with \`emend task approve ${id} plan\`$`, 'm'),
    );
    // the plan that waits is shown before the line saying how to approve it
    expect(follow.output()).toMatch(
      /^plan:\n {2}Make calc\.ops\.add return the sum instead of the difference\.\n {2}1\. Change the return expression of add in calc\/ops\.py from a - b to a \+ b\.\n(?: {2}.*\n)*task awaiting_plan: /m,
    );
    const approved = await runRemote(['task', 'approve', id, 'plan'], env);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(new RegExp(`^approved task ${id}: (running|pending)`));
    await waitForLine(follow.output, /^task awaiting_diff: /m);
    // so is the diff, once: not again at the end
    expect(follow.output()).toMatch(/^\+ {4}return a \+ b\n(?:.*\n)*task awaiting_diff: /m);
    const killed = await runRemote(['task', 'kill', id, '--json'], env);
    expect(JSON.parse(killed.stdout)).toMatchObject({ id, status: 'cancelled' });
    const exit = await follow.exited;
    expect(exit.code, exit.stdout + exit.stderr).toBe(2);
    expect(exit.stdout.trimEnd().split('\n').at(-1)).toMatch(/^cancelled/);
    expect(exit.stdout).toMatch(/^fixer done/m);
    expect(exit.stdout).not.toMatch(/^validator /m);
    expect(exit.stdout.split('\n').filter((l) => l === '+    return a + b')).toHaveLength(1);
  });

  it('continue --follow promotes a done preview to a PR run; a second one without credit is a 402', async () => {
    scriptCalcRun(svc.model);
    const owner = await newAccount(svc.h, { plan: 'free', credits: 1 });
    svc.h.github.createRepo('preview', 'calc', { files: CALC_REPO, collaborators: [owner.scm!.login] });
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const repo = `${svc.h.github.webUrl}/preview/calc`;
    const preview = await runRemote(['task', 'create', '--repo', repo, '--prompt', CALC_PROMPT, '--follow'], env);
    expect(preview.code, preview.stderr + preview.stdout).toBe(0);
    const id = /^created task (\S+) \(fix, preview, /.exec(preview.stdout)![1]!;
    expect(preview.stdout).not.toMatch(/PR http/);
    // its end says how to go on
    expect(preview.stdout).toContain(`a preview: \`emend task continue ${id}\` opens its pull request`);

    const child = await runRemote(['task', 'continue', id, '--follow'], env);
    expect(child.code, child.stderr + child.stdout).toBe(0);
    expect(child.stdout).toMatch(/^continued as task \S+ \(fix, pr, pending\)$/m);
    expect(child.stdout).toMatch(/^pr done/m);
    expect(child.stdout.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^done · PR ${repo}/pull/1`));
    const again = await runRemote(['task', 'continue', id], env);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/\(NO_CREDITS, HTTP 402, request [\w-]+\)/);
  });

  it('exits 1 when the task fails, saying why', async () => {
    // The provider refuses the planner's request outright (no retry helps a 400).
    svc.model.respond((req) => (stepOf(req) === 'planner' ? { status: 400 } : undefined));
    const owner = await calcOwner('failing');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const run = await runRemote(['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--follow'], env);
    expect(run.code, run.stderr + run.stdout).toBe(1);
    expect(run.stdout).toMatch(/^planner failed/m);
    expect(run.stdout.trimEnd().split('\n').at(-1)).toMatch(/^failed · /);
  });

  it('--json: create --follow prints one JSON event a line, list and show print JSON', async () => {
    scriptCalcRun(svc.model);
    const owner = await calcOwner('json');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const run = await runRemote(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--follow', '--json'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const events = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: { id?: string; status?: string } });
    expect(events[0]).toMatchObject({ type: 'created', data: { status: 'pending' } });
    expect(events.filter((e) => e.type === 'end')).toEqual([{ type: 'end', data: { status: 'done' } }]);
    expect(events.at(-1)).toMatchObject({ type: 'task', data: { status: 'done' } });
    const id = events[0]!.data.id!;

    const list = await runRemote(['task', 'list', '--json'], env);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((t) => t.id)).toEqual([id]);
    const done = await runRemote(['task', 'list', '--status', 'done', '--repo', owner.repo, '--json'], env);
    expect((JSON.parse(done.stdout) as { id: string }[]).map((t) => t.id)).toEqual([id]);
    const failed = await runRemote(['task', 'list', '--status', 'failed'], env);
    expect(failed.stdout).toBe('no tasks\n');
    expect((await runRemote(['task', 'list', '--status', 'finished'], env)).code).toBe(64);
    const show = await runRemote(['task', 'show', id, '--json'], env);
    const shown = JSON.parse(show.stdout) as { task: { pr_url: string }; logs: { step: string }[] };
    expect(shown.task.pr_url).toBe(`${owner.repo}/pull/1`);
    expect(new Set(shown.logs.map((l) => l.step))).toEqual(new Set(STEPS));

    // The finished task from the other commands: its diff, a replay of its stream, feedback.
    const diff = await runRemote(['task', 'diff', id], env);
    expect(diff.stdout).toContain('+    return a + b');
    const replay = await runRemote(['task', 'logs', id, '--follow'], env);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/^pr done \d+\.\ds$/m);
    const feedback = await runRemote(['task', 'feedback', id, '--rating', '5', '--correct', 'yes'], env);
    expect(feedback.code, feedback.stderr).toBe(0);
    const again = JSON.parse((await runRemote(['task', 'feedback', id, '--note', 'fine', '--json'], env)).stdout);
    expect(again).toMatchObject({ task_id: id, rating: 5, note: 'fine', history_count: 2 });

    const deleted = await runRemote(['task', 'delete', id, '--json'], env);
    expect(JSON.parse(deleted.stdout)).toEqual({ id, deleted: true });
    const gone = await runRemote(['task', 'show', id], env);
    expect(gone.code).toBe(3);
    expect(gone.stderr).toMatch(/\(not_found, HTTP 404, request /);
  });

  it('webhooks add (secret alone on stdout), list, test (exit 1 when not delivered), deliveries, disable, remove', async () => {
    const owner = await newAccount(svc.h, { plan: 'pro', scm: false });
    const env = remoteEnv({ server: svc.url, token: owner.token });
    // A name that does not resolve: saved (the address check passes), never delivered.
    const url = 'https://hooks.example.invalid/emend';
    const added = await runRemote(['webhooks', 'add', url, '--events', 'task.done,pr.merged'], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^whsec_\S+\n$/);
    const [hook] = JSON.parse((await runRemote(['webhooks', 'list', '--json'], env)).stdout) as { id: string }[];
    expect((await runRemote(['webhooks', 'list'], env)).stdout).toMatch(
      new RegExp(`^${hook!.id}\\s+${url}\\s+task.done,pr.merged\\s+on`, 'm'),
    );
    expect((await runRemote(['webhooks', 'list'], env)).stdout).not.toContain(added.stdout.trim());
    const ping = await runRemote(['webhooks', 'test', hook!.id], env);
    expect(ping.code).toBe(1);
    expect(ping.stdout).toContain('ping not delivered');
    expect((await runRemote(['webhooks', 'deliveries', hook!.id], env)).stdout).toMatch(/\sping\s+failed\s+1\s/);
    expect((await runRemote(['webhooks', 'disable', hook!.id], env)).stdout).toContain(`webhook ${hook!.id} is off`);
    const bad = await runRemote(['webhooks', 'add', url, '--events', 'task.exploded'], env);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('unknown event task.exploded');
    expect((await runRemote(['webhooks', 'remove', hook!.id], env)).code).toBe(0);
    expect((await runRemote(['webhooks', 'list'], env)).stdout).toContain('no webhook endpoints');
  });

  it('tokens create, list and revoke; keys add, list and delete; the revoked token is refused', async () => {
    const owner = await newAccount(svc.h, { plan: 'pro', scm: false });
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const made = await runRemote(['tokens', 'create', '--name', 'ci', '--json'], env);
    expect(made.code, made.stderr).toBe(0);
    const token = JSON.parse(made.stdout) as { id: string; token: string; name: string };
    expect(token).toMatchObject({ name: 'ci', token: expect.stringMatching(/^tk_/) });
    const plainMade = await runRemote(['tokens', 'create'], env);
    expect(plainMade.stdout).toMatch(/^tk_\S+\n$/); // the secret alone on stdout
    const listed = JSON.parse((await runRemote(['tokens', 'list', '--json'], env)).stdout) as { id: string }[];
    expect(listed.map((t) => t.id)).toContain(token.id);
    expect((await runRemote(['tokens', 'revoke', token.id], env)).stdout).toContain(`revoked token ${token.id}`);
    const refused = await runRemote(['me'], remoteEnv({ server: svc.url, token: token.token }));
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/\(invalid_token, HTTP 401, request /);

    const added = await runRemote(
      ['keys', 'add', 'anthropic', '--default-model', 'claude-x'],
      env,
      'sk-ant-secret-7890\n',
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('saved the anthropic key …7890');
    const keys = await runRemote(['keys', 'list'], env);
    expect(keys.stdout).toMatch(/^anthropic\s+…7890\s+claude-x/m);
    expect(keys.stdout).not.toContain('sk-ant-secret');
    expect((await runRemote(['keys', 'delete', 'anthropic'], env)).code).toBe(0);
    expect((await runRemote(['keys', 'list'], env)).stdout).toContain('no provider keys saved');
  });

  it("an error prints the server's message, code and request id, never a stack; usage errors exit 64", async () => {
    const owner = await newAccount(svc.h, { scm: false });
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const missing = await runRemote(['task', 'show', '0190f5f4-0000-7000-8000-000000000000'], env);
    expect(missing.code, missing.stderr).toBe(3);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^emend: .+ \(not_found, HTTP 404, request [\w-]+\)\n$/);
    expect(missing.stderr).not.toMatch(STACK);

    const usage = await runRemote(['task', 'create', '--repo', 'https://github.com/a/b'], env);
    expect(usage.code).toBe(64);
    expect(usage.stderr).toContain('task create needs one of --prompt and --prompt-file');
    const unknown = await runRemote(['task', 'frobnicate', 'x'], env);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toMatch(/unknown command 'frobnicate'/);
    const help = await runRemote(['task', 'create', '--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--prompt-file <file>');
    expect((await runRemote(['help'], env)).stdout).toContain('emend task create --repo URL');
  });
});

describe('emend task under a terminal', { timeout: 150_000 }, () => {
  it('shows a spinner per step, asks at the plan and diff gates, approves from the keyboard, colours the diff', async () => {
    scriptCalcRun(svc.model);
    const owner = await calcOwner('terminal');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const run = await runInTerminal(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--manual', '--follow'],
      env,
      [
        { when: /Approve the plan\?/, type: 'y' },
        { when: /Approve the diff\?/, type: '\r' },
      ],
    );
    const screen = plain(run.stdout);
    expect(run.code, screen).toBe(0);
    expect(screen).toContain('Make calc.ops.add return the sum'); // the plan, shown at its gate
    expect(screen).toMatch(/planner running/); // the spinner's line while the step runs
    for (const step of STEPS) expect(screen, step).toMatch(new RegExp(`${step} done \\d+\\.\\ds`));
    expect(run.stdout).toContain('\u001b[32m+    return a + b'); // green
    expect(screen).toMatch(new RegExp(`done · PR ${owner.repo}/pull/1`));
    expect(svc.h.github.pulls('terminal', 'calc')).toHaveLength(1);
  });

  it('Ctrl-C at a gate stops following and leaves the task waiting: exit 130', async () => {
    scriptCalcRun(svc.model);
    const owner = await calcOwner('interrupted');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const run = await runInTerminal(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--manual', '--follow'],
      env,
      [{ when: /Approve the plan\?/, type: '\u0003' }],
    );
    const screen = plain(run.stdout);
    expect(run.code, screen).toBe(130);
    const id = /created task (\S+) /.exec(screen)![1]!;
    expect(screen).toContain(`left waiting at the plan gate: \`emend task approve ${id} plan\` approves it`);
    const shown = await runRemote(['task', 'show', id, '--json'], env);
    expect(JSON.parse(shown.stdout).task.status).toBe('awaiting_plan');
    await runRemote(['task', 'kill', id], env);
  });

  it('with stdin not a terminal, a gate is a line saying how to approve, not a prompt', async () => {
    scriptCalcRun(svc.model);
    const owner = await calcOwner('no-keyboard');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const follow = startInTerminal(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--manual', '--follow'],
      env,
      [],
      { stdinFromNull: true },
    );
    const id = (await waitForLine(follow.screen, /waiting: `emend task approve (\S+) plan`/))[1]!;
    expect(follow.screen()).not.toContain('Approve the plan?');
    expect((await runRemote(['task', 'kill', id], env)).code).toBe(0);
    const exit = await follow.exited;
    expect(exit.code, follow.screen()).toBe(2);
  });

  it('No at the plan gate kills the task: exit 2', async () => {
    scriptCalcRun(svc.model);
    const owner = await calcOwner('declined');
    const env = remoteEnv({ server: svc.url, token: owner.token });
    const run = await runInTerminal(
      ['task', 'create', '--repo', owner.repo, '--prompt', CALC_PROMPT, '--manual', '--follow'],
      env,
      [{ when: /Approve the plan\?/, type: 'n' }],
    );
    expect(run.code, plain(run.stdout)).toBe(2);
    expect(plain(run.stdout)).toMatch(/cancelled/);
  });
});
