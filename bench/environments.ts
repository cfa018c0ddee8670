/**
 * Cached environments on real projects (npm run bench:environments; issue 28, point 5).
 *
 * For each project of bench/environments-projects.json: a clone of its fetched mirror
 * (MIRRORS/OWNER+NAME/repo, MIRRORS defaulting to /work/.mirror; `--mirrors DIR`) in a
 * temporary directory, checked out at the commit, and three `emend validate --repo DIR --json`
 * runs with a fresh EMEND_DATA_DIR of its own (so the first is cold):
 *
 *   1. base: the base tree as both trees (no working-tree change): cold setup, builds the entry;
 *   2. bug: the one-line bug as the working-tree change: warm setup (cache hit); must fail,
 *      naming the broken tests;
 *   3. revert: the bug committed, the original line as the change: must pass, fixing them.
 *
 * Prints a table: cold and warm setup, warm/cold, the test run time (the output's duration less
 * its setup), each verdict, and the wall time of the warm `emend validate`. Runs projects one
 * after the other; `--only a,b` picks some. Fetched code stays in the temporary directory.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type FixturePackage, type PackageIndex, servePackageIndex } from '../test/support/python-index.js';
import { log } from './stats.js';

interface Project {
  name: string;
  /** Python: setup gets PIP_INDEX_URL of the bench's local index (PyPI is not reachable here). */
  index?: boolean;
  repository: string;
  commit: string;
  manager: string;
  runner: string;
  file: string;
  from: string;
  to: string;
  expect: { count: number | null; names: string[] };
}

interface Output {
  command: string | null;
  passed: boolean | null;
  message?: string;
  new_failures: string[];
  fixed: string[];
  duration_ms: number;
  tests?: { passed: number; failed: number; skipped: number };
  setup: { duration_ms: number; skipped?: string; environment?: { key: string; cache: 'hit' | 'built' } } | null;
}

interface Run {
  out: Output | null;
  wallMs: number;
  error?: string;
}

const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    mirrors: { type: 'string', default: '/work/.mirror' },
    projects: { type: 'string', default: join(ROOT, 'bench/environments-projects.json') },
    only: { type: 'string' },
  },
});
const s = (ms: number | undefined) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`);

function describeMachine() {
  const cpus = os.cpus();
  const sh = (cmd: string) => spawnSync('sh', ['-c', cmd], { encoding: 'utf8' }).stdout.trim();
  log(
    `emend environments benchmark, ${new Date().toISOString()}, code at ${sh(`git -C ${ROOT} rev-parse --short HEAD`)}`,
  );
  log(
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, nproc ${sh('nproc')}, ` +
      `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM (free -g: ${sh('free -g | awk \'/^Mem/ {print $2" total, "$7" available"}\'')}), ` +
      `kernel ${os.release()}, node ${process.version}`,
  );
  log(
    `load average (1, 5, 15 min) at start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')}`,
  );
}

function git(dir: string, ...args: string[]) {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Replaces the one occurrence of `from` by `to` in the file; throws unless there is exactly one. */
function replaceOnce(path: string, from: string, to: string) {
  const text = readFileSync(path, 'utf8');
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`${path}: "${from}" is not there exactly once`);
  writeFileSync(path, text.slice(0, at) + to + text.slice(at + from.length));
}

/** How a project's validations reach the bench's local package index, if it uses one. */
interface IndexUse {
  /** EMEND_SETUP_ALLOW: the index's loopback host:port. */
  allow: string;
  /** `--setup-env` arguments: PIP_INDEX_URL. */
  args: string[];
}

/**
 * One `emend validate` run, awaited without blocking this process: the local index answers
 * from this process's event loop (a spawnSync here left pip waiting on it for minutes).
 */
async function validateRun(dir: string, dataDir: string, index?: IndexUse): Promise<Run> {
  const started = performance.now();
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      [join(ROOT, 'src/bin.ts'), 'validate', '--repo', dir, '--json', ...(index?.args ?? [])],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, EMEND_DATA_DIR: dataDir, ...(index ? { EMEND_SETUP_ALLOW: index.allow } : {}) },
        maxBuffer: 256 * 1024 * 1024,
      },
      (err, stdout, stderr) => done({ status: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
  const wallMs = performance.now() - started;
  try {
    return { out: JSON.parse(r.stdout) as Output, wallMs };
  } catch {
    return { out: null, wallMs, error: `exit ${r.status}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}` };
  }
}

const testsMs = (o: Output | null) => (o ? o.duration_ms - (o.setup?.duration_ms ?? 0) : undefined);
const verdict = (r: Run) =>
  r.out === null
    ? `error (${r.error})`
    : `passed ${r.out.passed}${r.out.passed === null ? ` (${r.out.message})` : ''}, ${r.out.tests?.passed ?? 0}/${r.out.tests?.failed ?? 0} passed/failed`;

/** Whether the bug run named what the project list expects. */
function bugMatches(p: Project, o: Output | null): string {
  if (o?.passed !== false) return 'MISS (did not fail)';
  const missing = p.expect.names.filter((n) => !o.new_failures.some((f) => f.includes(n)));
  const count = p.expect.count === null || o.new_failures.length === p.expect.count;
  return missing.length === 0 && count
    ? 'ok'
    : `MISS (${missing.length ? `not named: ${missing.join('; ')}` : ''}${count ? '' : ` count ${o.new_failures.length} ≠ ${p.expect.count}`})`;
}

/**
 * A PEP 503 index on loopback with what a Python project's isolated build asks for and this
 * machine has as files (PyPI is not reachable here): Debian's setuptools wheel
 * (python3-pip-whl) and the `wheel` package packed from Debian's python3-wheel.
 */
async function serveLocalIndex(): Promise<PackageIndex> {
  const wheelsDir = '/usr/share/python-wheels';
  const files = readdirSync(wheelsDir)
    .filter((f) => f.startsWith('setuptools-') && f.endsWith('.whl'))
    .map((filename) => ({ filename, bytes: readFileSync(join(wheelsDir, filename)) }));
  const site = '/usr/lib/python3/dist-packages';
  const info = readdirSync(site).find((f) => /^wheel-[\d.]+\.(egg|dist)-info$/.test(f));
  const packages: FixturePackage[] = [];
  if (info) {
    const version = /^wheel-([\d.]+)\./.exec(info)![1]!;
    const sources: Record<string, string> = {};
    const walk = (rel: string) => {
      for (const e of readdirSync(join(site, rel), { withFileTypes: true })) {
        const path = `${rel}/${e.name}`;
        if (e.isDirectory() && e.name !== '__pycache__') walk(path);
        else if (e.isFile() && e.name.endsWith('.py')) sources[path] = readFileSync(join(site, path), 'utf8');
      }
    };
    walk('wheel');
    // Its entry points register the bdist_wheel command setuptools' isolated build asks for.
    const points = join(site, info, 'entry_points.txt');
    if (existsSync(points)) sources[`wheel-${version}.dist-info/entry_points.txt`] = readFileSync(points, 'utf8');
    packages.push({ name: 'wheel', version, files: sources });
  }
  const index = await servePackageIndex(packages, files);
  log(
    `local index ${index.url}: ${[...files.map((f) => f.filename), ...packages.map((p) => `${p.name}-${p.version} (packed)`)].join(', ')}`,
  );
  return index;
}

async function main() {
  const all = (JSON.parse(readFileSync(values.projects!, 'utf8')) as { projects: Project[] }).projects;
  const only = values.only?.split(',');
  const projects = only ? all.filter((p) => only.includes(p.name)) : all;
  describeMachine();
  log(
    `method: per project a fresh EMEND_DATA_DIR; runs base (cold), base again (warm), bug (warm), revert (warm); cold setup = wall(base) - wall(base again) + warm setup; one run each`,
  );
  const rows: string[][] = [];
  const tmp = mkdtempSync(join(os.tmpdir(), 'emend-envbench-'));
  const index = projects.some((p) => p.index) ? await serveLocalIndex() : undefined;
  try {
    for (const p of projects) {
      const use =
        p.index && index ? { allow: index.hostPort, args: ['--setup-env', `PIP_INDEX_URL=${index.url}`] } : undefined;
      const askedBefore = index?.asked.length ?? 0;
      const dir = join(tmp, p.name);
      const dataDir = mkdtempSync(join(tmp, `data-${p.name}-`));
      const mirror = join(values.mirrors!, p.repository.replace('/', '+'), 'repo');
      execFileSync('git', ['clone', '-q', '--no-checkout', mirror, dir]);
      git(dir, 'checkout', '-q', p.commit);
      git(dir, 'config', 'user.email', 'bench@emend.invalid');
      git(dir, 'config', 'user.name', 'bench');
      log(`\n${p.name} (${p.repository} @ ${p.commit.slice(0, 8)}, ${p.runner})`);

      const base = await validateRun(dir, dataDir, use);
      // The output's setup of a cold run is the laying of the entry it just built into the change's
      // tree; the install itself is not reported. So the base tree again, warm: the difference in
      // wall time is the cold setup less the warm one.
      const again = await validateRun(dir, dataDir, use);
      log(
        `  base:   ${verdict(base)}; setup ${s(base.out?.setup?.duration_ms)} (${base.out?.setup?.environment?.cache ?? base.out?.setup?.skipped ?? 'no setup'}), wall ${s(base.wallMs)}`,
      );
      log(
        `  again:  ${verdict(again)}; setup ${s(again.out?.setup?.duration_ms)} (${again.out?.setup?.environment?.cache ?? 'no cache'}), wall ${s(again.wallMs)}`,
      );
      const original = readFileSync(join(dir, p.file), 'utf8');
      replaceOnce(join(dir, p.file), p.from, p.to);
      const bug = await validateRun(dir, dataDir, use);
      const bugCheck = bugMatches(p, bug.out);
      log(
        `  bug:    ${verdict(bug)}; setup ${s(bug.out?.setup?.duration_ms)} (${bug.out?.setup?.environment?.cache ?? 'no cache'}), wall ${s(bug.wallMs)}; ${bugCheck}`,
      );
      log(
        `          new failures (${bug.out?.new_failures.length ?? 0}): ${JSON.stringify(bug.out?.new_failures ?? [])}`,
      );
      git(dir, 'commit', '-q', '-am', 'bug');
      writeFileSync(join(dir, p.file), original); // `to` may be elsewhere in the file too (commander)
      const revert = await validateRun(dir, dataDir, use);
      log(
        `  revert: ${verdict(revert)}; fixed ${revert.out?.fixed.length ?? 0}; setup ${s(revert.out?.setup?.duration_ms)} (${revert.out?.setup?.environment?.cache ?? 'no cache'}), wall ${s(revert.wallMs)}`,
      );
      if (revert.out?.passed !== true) log(`          new failures: ${JSON.stringify(revert.out?.new_failures ?? [])}`);
      if (use) log(`  local index: asked for ${JSON.stringify(index!.asked.slice(askedBefore))}`);

      const warm = again.out?.setup?.duration_ms;
      const cold = base.out && again.out && warm !== undefined ? base.wallMs - again.wallMs + warm : undefined;
      rows.push([
        p.name,
        p.runner,
        s(cold),
        `${s(warm)} (${bug.out?.setup?.environment?.cache ?? '–'})`,
        cold && warm !== undefined ? (warm / cold).toFixed(3) : '–',
        s(testsMs(bug.out)),
        base.out ? String(base.out.passed) : 'error',
        `${bug.out ? String(bug.out.passed) : 'error'}, ${bug.out?.new_failures.length ?? 0} new: ${bugCheck}`,
        `${revert.out ? String(revert.out.passed) : 'error'}, ${revert.out?.fixed.length ?? 0} fixed`,
        s(bug.wallMs),
      ]);
      rmSync(dir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  } finally {
    await index?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  log('');
  const head = [
    'project',
    'runner',
    'cold setup',
    'warm setup',
    'warm/cold',
    'tests (bug run)',
    'base',
    'bug',
    'revert',
    'validate warm (wall)',
  ];
  log(`| ${head.join(' | ')} |`);
  log(`|${head.map(() => '---').join('|')}|`);
  for (const r of rows) log(`| ${r.join(' | ')} |`);
}

await main();
