import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, tasks } from '../../src/db/schema.js';
import { listSiteFiles, readSiteFile, saveSiteFiles } from '../../src/sites/store.js';
import { isolatedGitEnv } from '../support/git-env.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
let scratch: string;
/** Every response body and every code-host token, to check that no token ever comes back. */
const bodies: string[] = [];
const tokens: string[] = [];

/** newAccount, remembering the account's code-host token. */
async function account(opts: Parameters<typeof newAccount>[1]) {
  const a = await newAccount(h, opts);
  if (a.scm) tokens.push(a.scm.token);
  return a;
}

beforeAll(async () => {
  h = await startHarness({ EMEND_COMMIT_NAME: 'emend bot', EMEND_COMMIT_EMAIL: 'bot@emend.example' }, { scm: 'fake' });
  scratch = mkdtempSync(join(tmpdir(), 'emend-deploy-test-'));
});
afterAll(async () => {
  await h?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

// A PNG's first bytes: not valid UTF-8, so a text round trip would change them.
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80]);
const SITE = {
  'index.html': '<!doctype html><title>Bakery</title><link rel="stylesheet" href="assets/site.css">\n',
  'assets/site.css': 'body { font-family: serif; }\n',
  'about/index.html': '<h1>About us</h1>\n',
};

async function inject(opts: InjectOptions) {
  const res = await h.app.inject(opts);
  bodies.push(res.body);
  return res;
}

const deploy = (auth: Record<string, string>, taskId: string, body: unknown) =>
  inject({ method: 'POST', url: `/v1/tasks/${taskId}/deploy-git`, headers: auth, payload: body as object });

async function createTask(auth: Record<string, string>, body: object): Promise<string> {
  const res = await inject({ method: 'POST', url: '/v1/tasks', headers: auth, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

/** A scaffold task whose site is built: files stored, task done. */
async function builtSite(
  auth: Record<string, string>,
  files: Parameters<typeof saveSiteFiles>[2] | null = siteFiles(),
): Promise<string> {
  const id = await createTask(auth, { task_type: 'scaffold', prompt: 'A landing page for a bakery' });
  if (files) await saveSiteFiles(h.deps, id, files);
  await forceStatus(h, eq(tasks.id, id), 'done');
  return id;
}

const siteFiles = () => [
  ...Object.entries(SITE).map(([path, content]) => ({ path, content })),
  { path: 'img/logo.png', content: PNG },
];

/** git, asynchronously (the fake answers from this process), with the token in a header when given. */
function git(cwd: string, token: string | undefined, ...args: string[]) {
  const auth = token
    ? ['-c', `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`]
    : [];
  const child = spawn('git', [...auth, ...args], {
    cwd,
    env: isolatedGitEnv(scratch),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('site file store', () => {
  it('replaces a task set as a whole, keeps bytes exact and guesses content types', async () => {
    const { auth } = await account({ plan: 'free', scm: false });
    const id = await createTask(auth, { task_type: 'scaffold', prompt: 'A page' });
    await saveSiteFiles(h.deps, id, [{ path: 'old.html', content: 'old' }]);
    const saved = await saveSiteFiles(h.deps, id, siteFiles());
    expect(saved.map((f) => f.path)).toEqual(['about/index.html', 'assets/site.css', 'img/logo.png', 'index.html']);
    const listed = await listSiteFiles(h.deps, id);
    expect(listed.map((f) => [f.path, f.contentType, f.size])).toEqual([
      ['about/index.html', 'text/html; charset=utf-8', Buffer.byteLength(SITE['about/index.html'])],
      ['assets/site.css', 'text/css; charset=utf-8', Buffer.byteLength(SITE['assets/site.css'])],
      ['img/logo.png', 'image/png', PNG.length],
      ['index.html', 'text/html; charset=utf-8', Buffer.byteLength(SITE['index.html'])],
    ]);
    const logo = await readSiteFile(h.deps, id, 'img/logo.png');
    expect(Buffer.isBuffer(logo!.content)).toBe(true);
    expect(logo!.content.equals(PNG)).toBe(true);
    expect(await readSiteFile(h.deps, id, 'old.html')).toBeNull();
  });

  it('refuses paths that could escape the tree or touch .git, leaving the set as it was', async () => {
    const { auth } = await account({ plan: 'free', scm: false });
    const id = await createTask(auth, { task_type: 'scaffold', prompt: 'A page' });
    await saveSiteFiles(h.deps, id, [{ path: 'index.html', content: 'kept' }]);
    for (const path of [
      '/etc/passwd',
      '../x',
      'a/../../x',
      '.git/config',
      'sub/.GIT/hooks/pre-commit',
      '',
      'a//b',
      './a',
      'a\\b',
      'a\nb',
    ]) {
      await expect(
        saveSiteFiles(h.deps, id, [
          { path: 'ok.html', content: 'x' },
          { path, content: 'x' },
        ]),
        JSON.stringify(path),
      ).rejects.toMatchObject({
        code: 'bad_request',
      });
    }
    await expect(
      saveSiteFiles(h.deps, id, [
        { path: 'a.html', content: '1' },
        { path: 'a.html', content: '2' },
      ]),
    ).rejects.toMatchObject({ code: 'bad_request' });
    expect((await listSiteFiles(h.deps, id)).map((f) => f.path)).toEqual(['index.html']);
  });
});

describe('POST /v1/tasks/{id}/deploy-git', () => {
  it('creates a public repository holding exactly the site as one commit on main, and records it on the task', async () => {
    const { auth, scm } = await account({ plan: 'free' });
    const id = await builtSite(auth);
    const res = await deploy(auth, id, { repo_name: 'bakery-site' });
    expect(res.statusCode, res.body).toBe(201);
    const repoUrl = `${h.github.webUrl}/${scm!.login}/bakery-site`;
    expect(res.json()).toEqual({ ok: true, repo_url: repoUrl, clone_url: `${repoUrl}.git` });

    expect(h.github.repo(scm!.login, 'bakery-site')).toMatchObject({ private: false });
    const files = h.github.files(scm!.login, 'bakery-site', 'main');
    expect(Object.keys(files).sort()).toEqual(['about/index.html', 'assets/site.css', 'img/logo.png', 'index.html']);
    for (const [path, content] of Object.entries(SITE)) expect(files[path]).toBe(content);

    // Bytes and history as a clone sees them: the binary file intact, one commit by the service.
    const dir = join(scratch, 'clone-public');
    const cloned = await git(scratch, undefined, 'clone', '--quiet', res.json().clone_url, dir);
    expect(cloned.status, cloned.stderr).toBe(0);
    expect(readFileSync(join(dir, 'img/logo.png')).equals(PNG)).toBe(true);
    const log = await git(dir, undefined, 'log', '--format=%an <%ae>|%cn <%ce>|%s', 'main');
    expect(log.stdout.trim().split('\n')).toEqual([
      'emend bot <bot@emend.example>|emend bot <bot@emend.example>|Initial site generated by emend',
    ]);

    const got = await inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth });
    expect(got.json().task.deployed_repo).toBe(repoUrl);
  });

  it('honours private, and a second deploy of the same task makes another repository and becomes deployed_repo', async () => {
    const { auth, scm } = await account({ plan: 'free' });
    const id = await builtSite(auth);
    expect((await deploy(auth, id, { repo_name: 'first', private: false })).statusCode).toBe(201);
    const res = await deploy(auth, id, { repo_name: 'Second_site.v2', private: true });
    expect(res.statusCode, res.body).toBe(201);
    expect(h.github.repo(scm!.login, 'first')).toMatchObject({ private: false });
    expect(h.github.repo(scm!.login, 'Second_site.v2')).toMatchObject({ private: true });
    expect(Object.keys(h.github.files(scm!.login, 'Second_site.v2', 'main')).sort()).toEqual([
      'about/index.html',
      'assets/site.css',
      'img/logo.png',
      'index.html',
    ]);
    // private: invisible without the token
    const anonymous = await git(scratch, undefined, 'ls-remote', res.json().clone_url);
    expect(anonymous.status).not.toBe(0);
    const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, id));
    expect(row!.deployedRepo).toBe(`${h.github.webUrl}/${scm!.login}/Second_site.v2`);
    // Each deploy is recorded with the task it names, in the transaction that sets deployed_repo.
    const deployed = await h.deps.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.workspaceId, row!.workspaceId), eq(auditEvents.action, 'task.deployed')));
    expect(deployed.map((r) => [r.targets, r.detail])).toEqual([
      [{ task_id: id }, { repo_url: `${h.github.webUrl}/${scm!.login}/first` }],
      [{ task_id: id }, { repo_url: row!.deployedRepo }],
    ]);
  });

  it('answers 409 naming the host message when the name is taken, and leaves that repository alone', async () => {
    const { auth, scm } = await account({ plan: 'free' });
    h.github.createRepo(scm!.login, 'taken', { files: { 'README.md': 'mine\n' } });
    const id = await builtSite(auth);
    const res = await deploy(auth, id, { repo_name: 'taken' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'conflict' });
    expect(res.json().message).toMatch(/already exists/);
    expect(h.github.files(scm!.login, 'taken', 'main')).toEqual({ 'README.md': 'mine\n' });
    const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, id));
    expect(row!.deployedRepo).toBeNull();
    expect(
      await h.deps.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.workspaceId, row!.workspaceId), eq(auditEvents.action, 'task.deployed'))),
    ).toEqual([]);
  });

  it('answers 400 for a fix task', async () => {
    const { auth, scm } = await account({ plan: 'free' });
    h.github.createRepo(scm!.login, 'lib', { files: { 'a.py': 'x = 1\n' } });
    const id = await createTask(auth, { prompt: 'Fix the bug', repo_url: `${h.github.webUrl}/${scm!.login}/lib` });
    await forceStatus(h, eq(tasks.id, id), 'done');
    const res = await deploy(auth, id, { repo_name: 'nope' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'bad_request',
      message: 'deploy-git is for scaffold tasks; fix tasks open a pull request',
    });
    expect(h.github.repo(scm!.login, 'nope')).toBeUndefined();
  });

  it('answers 409 while the site is not built: no files, or the task not done', async () => {
    const { auth, scm } = await account({ plan: 'free' });
    const empty = await builtSite(auth, null);
    const res = await deploy(auth, empty, { repo_name: 'empty' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'conflict' });
    expect(res.json().message).toMatch(/no site files/);

    const running = await createTask(auth, { task_type: 'scaffold', prompt: 'Another page' });
    await saveSiteFiles(h.deps, running, siteFiles());
    await forceStatus(h, eq(tasks.id, running), 'running');
    const res2 = await deploy(auth, running, { repo_name: 'early' });
    expect(res2.statusCode).toBe(409);
    expect(res2.json().message).toMatch(/not built yet.*running/);
    expect(h.github.repo(scm!.login, 'empty')).toBeUndefined();
    expect(h.github.repo(scm!.login, 'early')).toBeUndefined();
  });

  it('answers 412 scm_not_connected when no code-host account is connected', async () => {
    const { auth } = await account({ plan: 'free', scm: false });
    const id = await builtSite(auth);
    const res = await deploy(auth, id, { repo_name: 'site' });
    expect(res.statusCode).toBe(412);
    expect(res.json()).toMatchObject({ error: 'scm_not_connected' });
  });

  it('answers 403 to demo tokens, 404 for another account task, and 401 without a token', async () => {
    const { auth } = await account({ plan: 'free' });
    const id = await builtSite(auth);
    const demo = (
      await inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'deploy-demo@example.com' } })
    ).json().token;
    const asDemo = await deploy({ authorization: `Bearer ${demo}` }, id, { repo_name: 'demo-site' });
    expect(asDemo.statusCode).toBe(403);
    expect(asDemo.json().error).toBe('forbidden');

    const other = await account({ plan: 'pro' });
    const asOther = await deploy(other.auth, id, { repo_name: 'stolen' });
    expect(asOther.statusCode).toBe(404);
    expect(asOther.json().error).toBe('not_found');
    expect(h.github.repo(other.scm!.login, 'stolen')).toBeUndefined();

    expect((await deploy({}, id, { repo_name: 'x' })).statusCode).toBe(401);
  });

  it('answers 400 naming repo_name for a name the host would refuse', async () => {
    const { auth, scm } = await account({ plan: 'free' });
    const id = await builtSite(auth);
    for (const body of [
      {},
      { repo_name: '' },
      { repo_name: '.' },
      { repo_name: '..' },
      { repo_name: 'a/b' },
      { repo_name: 'has space' },
      { repo_name: 'x'.repeat(101) },
      { repo_name: 7 },
    ]) {
      const res = await deploy(auth, id, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe('bad_request');
      expect(res.json().message, JSON.stringify(body)).toMatch(/repo_name/);
    }
    expect((await deploy(auth, id, { repo_name: 'ok', private: 'yes' })).json().message).toMatch(/private/);
    expect((await deploy(auth, id, { repo_name: 'ok', extra: 1 })).statusCode).toBe(400);
    expect(h.github.repo(scm!.login, 'ok')).toBeUndefined();
  });

  it('turns other refusals of the host into 400 and its failures into 502, never 500', async () => {
    const { auth } = await account({ plan: 'free' });
    const id = await builtSite(auth);
    h.github.failNext('POST', /\/user\/repos$/, {
      status: 403,
      body: { message: 'Resource not accessible by personal access token' },
    });
    const refused = await deploy(auth, id, { repo_name: 'site-a' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/Resource not accessible/);
    h.github.failNext('POST', /\/user\/repos$/, { status: 503 });
    const down = await deploy(auth, id, { repo_name: 'site-b' });
    expect(down.statusCode).toBe(502);
    expect(down.json().error).toBe('scm_unavailable');
  });

  it('never lets the code-host token out: not in responses, logs, or files left under the data dir', async () => {
    const { auth, scm } = await account({ plan: 'free' });
    const id = await builtSite(auth);
    expect((await deploy(auth, id, { repo_name: 'secret-check' })).statusCode).toBe(201);
    expect(tokens).toContain(scm!.token);
    // every account's token, across all the tests of this file, raw and as git's Basic credential
    const forms = tokens.flatMap((t) => [t, Buffer.from(`x-access-token:${t}`).toString('base64')]);
    for (const form of forms) {
      expect(bodies.join('\n')).not.toContain(form);
      expect(h.logLines.join('\n')).not.toContain(form);
    }
    const dataDir = h.deps.config.dataDir;
    const left = filesUnder(dataDir);
    expect(left.filter((f) => f.startsWith(join(dataDir, 'deploy')))).toEqual([]);
    for (const file of left) {
      const text = readFileSync(file).toString('latin1');
      for (const form of forms) expect(text.includes(form), file).toBe(false);
    }
  });
});
