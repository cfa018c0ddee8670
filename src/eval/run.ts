import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import type { RunLimits } from '../validator/run.js';
import { type RepoSource, checkoutAt } from './checkout.js';
import type { Instance } from './dataset.js';
import { type Verdict, judge } from './judge.js';
import { type EditOutcome, applyGoldPatch } from './oracle.js';

/**
 * What stands in for the model's answer: `oracle` the gold patch through the fixer's edit path,
 * `baseline` nothing (the unchanged checkout, which must resolve nothing). The model mode (the
 * fix pipeline per instance) is one more producer of a change in the checkout.
 */
export type EvalMode = 'oracle' | 'baseline';

/** One line of results.jsonl. */
export interface InstanceResult extends Verdict {
  instance_id: string;
  repo: string;
  mode: EvalMode;
  /** The oracle's edits: how many applied and what failed. */
  edits?: EditOutcome;
}

/** What the operator's setup file gives one repository. */
export interface RepoSetup {
  command?: string;
  env?: Record<string, string>;
}

export interface RunOptions {
  sandbox: Sandbox;
  source: RepoSource;
  /** Per-repository setup (owner/name → the command and the tests' environment). */
  setup: Record<string, RepoSetup>;
  limits?: Partial<RunLimits>;
  signal?: AbortSignal;
  tmpRoot?: string;
}

/** Checks out the instance's base commit, makes the mode's change, judges it; never throws for the instance's own faults. */
export async function runInstance(instance: Instance, mode: EvalMode, options: RunOptions): Promise<InstanceResult> {
  const started = performance.now();
  const work = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'emend-eval-'));
  const head = { instance_id: instance.instance_id, repo: instance.repo, mode };
  try {
    const dir = join(work, 'repo');
    try {
      await checkoutAt(instance.repo, instance.base_commit, dir, options.source, join(work, 'git-home'));
    } catch (err) {
      const ids = [...instance.FAIL_TO_PASS, ...instance.PASS_TO_PASS];
      return {
        ...head,
        resolved: false,
        f2p: { passed: 0, total: instance.FAIL_TO_PASS.length },
        p2p: { passed: 0, total: instance.PASS_TO_PASS.length },
        not_passed: ids,
        setup: { ok: false, failure: { stage: 'checkout', reason: (err as Error).message } },
        wall_ms: Math.round(performance.now() - started),
      };
    }
    const edits = mode === 'oracle' ? await applyGoldPatch(dir, instance.patch) : undefined;
    const setup = options.setup[instance.repo] ?? {};
    const verdict = await judge(dir, instance, {
      sandbox: options.sandbox,
      ...(setup.command !== undefined ? { setupCommand: setup.command } : {}),
      ...(setup.env !== undefined ? { env: setup.env } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.tmpRoot ? { tmpRoot: options.tmpRoot } : {}),
    });
    return { ...head, ...verdict, ...(edits ? { edits } : {}), wall_ms: Math.round(performance.now() - started) };
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => {});
  }
}
