import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, GOOD_FIX, scriptCalcRun } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';
import { mustOpen, openSse } from '../support/sse-client.js';

// A setup-only secret through a whole fix task: the setup phase gets it (and proves it with a
// hash), the test phase, the model, logs, SSE, the export and the files left behind do not.

const SECRET = 'npm_E2ESETUPSECRET_7f3a9c21b4d8e6f0';
const HASH = createHash('sha256').update(SECRET).digest('hex');
let svc: ModelService;
let baseUrl: string;

beforeAll(async () => {
  svc = await startModelService({ LOG_LEVEL: 'debug' });
  baseUrl = await svc.h.app.listen({ host: '127.0.0.1', port: 0 });
  svc.h.github.createRepo('acme', 'private-registry', { files: CALC_REPO });
});
afterAll(async () => {
  await svc?.close();
});

/** Every regular file under `dir` (symbolic links not followed). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const name of names) {
      const p = join(d, name);
      const info = lstatSync(p, { throwIfNoEntry: false });
      if (info?.isDirectory()) walk(p);
      else if (info?.isFile()) out.push(p);
    }
  };
  walk(dir);
  return out;
}

describe('setup-only secrets in a fix task', { timeout: 180_000 }, () => {
  it('reach the setup phase only: not the test phase, the model, logs, SSE, the export or any file left', async () => {
    const { h, model } = svc;
    scriptCalcRun(model, [GOOD_FIX]);
    const owner = await newAccount(h, { plan: 'pro', credits: 5 });
    const repo = `${h.github.webUrl}/acme/private-registry`;
    const q = `?repo=${encodeURIComponent(repo)}`;
    const headers = owner.auth;
    const patch = await h.app.inject({
      method: 'PATCH',
      url: `/v1/me/repos/settings${q}`,
      headers,
      payload: {
        // The setup sees the secret: it hashes it into the tree, prints it (redacted on the way
        // out) and leaves it in a file under HOME (removed before the tests run).
        setup_command:
          'test -n "$NPM_TOKEN" && printf %s "$NPM_TOKEN" | sha256sum | cut -c1-64 > .setup-saw-token && ' +
          'printf "//registry/:_authToken=%s\\n" "$NPM_TOKEN" > "$HOME/.npmrc" && echo "token is $NPM_TOKEN" && ' +
          // a file past any size a scrub might skip (65 MiB, sparse) with the token at its end
          'truncate -s 65M "$HOME/bundle.tar" && printf %s "$NPM_TOKEN" >> "$HOME/bundle.tar" && ' +
          'test "$FROM_SETTINGS" = visible',
        // The tests run only if the setup got the secret, the test phase does not have it, the
        // file holding it is gone, and the account's variable is there.
        test_command:
          `test "$(cat .setup-saw-token)" = ${HASH} && test -z "\${NPM_TOKEN:-}" && ` +
          'test ! -e "$HOME/.npmrc" && test ! -e "$HOME/bundle.tar" && test "$FROM_SETTINGS" = visible && python3 -m pytest',
        env: { FROM_SETTINGS: 'visible' },
      },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const saved = await h.app.inject({
      method: 'POST',
      url: `/v1/me/repos/secrets${q}`,
      headers,
      payload: { name: 'NPM_TOKEN', value: SECRET },
    });
    expect(saved.statusCode, saved.body).toBe(201);

    const before = model.calls.length;
    const { task, byStep, logs } = await runFixTask(h, headers, repo, 'done');
    const validator = byStep('validator').at(-1)!.output as {
      passed: boolean;
      command: string;
      setup?: { command: string; exit_code: number };
      baseline?: unknown;
    };
    expect(validator.passed).toBe(true);
    // the command of the settings, and the setup of the settings, both ran
    expect(validator.command).toContain(HASH);
    expect(JSON.stringify(validator)).toContain('.setup-saw-token');
    // the setup's output came through the log redacted, and said which file it removed
    const all = JSON.stringify(logs);
    const running = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}`, headers })).json() as {
      logs: unknown[];
    };
    const everything = JSON.stringify(running);
    expect(h.logLines.join('\n') + everything).toContain('token is [redacted]');
    expect(h.logLines.join('\n') + everything).toMatch(
      /removed 2 file\(s\) holding a setup secret: [^\s"]*\.npmrc, [^\s"]*bundle\.tar/,
    );

    const stream = mustOpen(
      await openSse(`${baseUrl}/v1/tasks/${task.id}/logs/stream`, { headers: { ...headers, 'last-event-id': '0' } }),
    );
    await stream.waitFor((i) => i.kind === 'event' && i.event === 'end', 30_000);
    await stream.closed;
    const exported = await h.app.inject({ method: 'GET', url: '/v1/me/training/export.jsonl', headers });
    expect(exported.statusCode).toBe(200);
    expect(exported.body).toContain(task.id);

    const seen: Record<string, string> = {
      'task and logs': everything + all,
      'SSE stream': JSON.stringify(stream.items),
      'training export': exported.body,
      'log lines': h.logLines.join('\n'),
      'model requests': model.calls
        .slice(before)
        .map((c) => JSON.stringify(c.body))
        .join('\n'),
    };
    for (const [where, text] of Object.entries(seen)) {
      expect(text.length, where).toBeGreaterThan(0);
      expect(text.includes(SECRET), `the secret in the ${where}`).toBe(false);
    }
    // no file left by the run (the data directory: checkouts, mirrors, caches; the validator's temporary copies)
    const left = [
      ...filesUnder(h.deps.config.dataDir),
      ...readdirSync(tmpdir())
        .filter((n) => n.startsWith('emend-validate-'))
        .flatMap((n) => filesUnder(join(tmpdir(), n))),
    ];
    expect(left.length).toBeGreaterThan(0);
    // Other test files' validations run beside this one and remove their copies as they end: a
    // file gone by the time it is read was not left.
    const contentOf = (f: string) => {
      try {
        return readFileSync(f);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
        throw err;
      }
    };
    const holding = left.filter((f) => contentOf(f).includes(SECRET));
    expect(holding).toEqual([]);
  });
});
