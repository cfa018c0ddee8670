/**
 * The unified-diff → search/replace converter (src/edits/from-diff.ts) on the real files of the
 * evaluation set (npm run bench:diff-converter): for each instance of
 * /work/shared/bench/swe-lite-eval.jsonl, the files its gold patch touches are taken from the
 * repository's mirror at base_commit (`git show`, the mirror is only read), the patch is applied
 * once by `git apply` and once as the converted answer through the real parser and applier, and
 * the two results are compared byte for byte. Prints the instances reproduced exactly and the
 * median conversion time. The unit test (test/edits/from-diff.test.ts) runs the same
 * check on made-up files, so it needs no mirror; this one meets the files' real repetitions.
 *
 *   BENCH_DATA (default /work/shared/bench/swe-lite-eval.jsonl), BENCH_MIRRORS (/work/.mirror)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parsePatch } from 'diff';
import { applyEdits, parseEdits } from '../src/edits/index.js';
import { editsFromUnifiedDiff, formatEdits } from '../src/edits/from-diff.js';
import { loadAverage, log, median } from './stats.js';
import { mirrorGitDir as mirrorOf } from '../src/eval/checkout.js';

interface Instance {
  instance_id: string;
  repo: string;
  base_commit: string;
  patch: string;
}

const DATA = process.env.BENCH_DATA ?? '/work/shared/bench/swe-lite-eval.jsonl';
const MIRRORS = process.env.BENCH_MIRRORS ?? '/work/.mirror';

/** The mirror's git directory, looked up as `emend eval --mirrors` does. */
const mirrorGitDir = (repo: string) => mirrorOf(MIRRORS, repo);

/** The base files a patch names, as the mirror has them at the commit. */
function baseFiles(gitDir: string, commit: string, patch: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const p of parsePatch(patch)) {
    const path = p.oldFileName?.replace(/^a\//, '');
    if (!path || path === '/dev/null') continue;
    files[path] = execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:${path}`], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
  }
  return files;
}

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

async function checkOne(inst: Instance, gitDir: string): Promise<{ ok: boolean; why?: string; ms: number }> {
  const files = baseFiles(gitDir, inst.base_commit, inst.patch);
  const work = mkdtempSync(join(os.tmpdir(), 'emend-bench-diffconv-'));
  try {
    const byGit = join(work, 'git');
    const byEdits = join(work, 'edits');
    writeTree(byGit, files);
    writeTree(byEdits, files);
    writeFileSync(join(work, 'the.patch'), inst.patch);
    execFileSync('git', ['apply', '--whitespace=nowarn', join(work, 'the.patch')], { cwd: byGit });
    const t0 = performance.now();
    const converted = editsFromUnifiedDiff(inst.patch, (p) => files[p]);
    const answer = formatEdits(converted.edits);
    const ms = performance.now() - t0;
    if (converted.errors.length) return { ok: false, why: converted.errors.join('; '), ms };
    const report = await applyEdits(byEdits, parseEdits(answer).edits);
    if (report.failed.length) return { ok: false, why: report.failed.map((f) => f.reason).join('; '), ms };
    for (const p of parsePatch(inst.patch)) {
      const path = p.newFileName?.replace(/^b\//, '');
      if (!path || path === '/dev/null') continue;
      if (readFileSync(join(byGit, path), 'utf8') !== readFileSync(join(byEdits, path), 'utf8'))
        return { ok: false, why: `${path} differs`, ms };
    }
    return { ok: true, ms };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<number> {
  const instances = readFileSync(DATA, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Instance);
  const runnable = instances.filter((i) => mirrorGitDir(i.repo));
  if (runnable.length === 0) {
    log(`NOTICE: no repository mirrors under ${MIRRORS}: fetch the repositories first. Nothing measured.`);
    return 0;
  }
  log(
    `machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, Node ${process.version}; load ${loadAverage()}`,
  );
  let exact = 0;
  const times: number[] = [];
  for (const inst of runnable) {
    const r = await checkOne(inst, mirrorGitDir(inst.repo)!);
    times.push(r.ms);
    if (r.ok) exact++;
    else log(`${inst.instance_id}: NOT reproduced — ${r.why}`);
  }
  log(
    `reproduced exactly: ${exact} of ${runnable.length} instances (${instances.length - runnable.length} without a ` +
      `mirror); conversion median ${median(times).toFixed(2)} ms`,
  );
  return exact === runnable.length ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
