import type { FixerOutput, PlannerOutput, PrOutput, ValidatorOutput } from '../../src/step-contract/index.js';

/**
 * Step outputs that keep the step contract (src/step-contract), for engine tests whose steps
 * are stand-ins: the runner hands later steps only outputs that parse with their schemas.
 */
export const plannerOutput = (over: Partial<PlannerOutput> = {}): PlannerOutput => ({
  summary: 'change one line',
  steps: ['edit'],
  likely_files: ['a.py'],
  test_strategy: 'run the tests',
  risks: [],
  memory_used: [],
  model: 'test/model',
  ...over,
});

export const fixerOutput = (diff: string, over: Partial<FixerOutput> = {}): FixerOutput => ({
  diff,
  files_changed: [{ path: 'a.py', kind: 'modified' }],
  edits_applied: 1,
  edits_failed: [],
  rounds: 1,
  notes: '',
  memory_used: [],
  model: 'test/model',
  ...over,
});

export const validatorOutput = (over: Partial<ValidatorOutput> = {}): ValidatorOutput => ({
  command: 'pytest',
  setup: null,
  passed: true,
  new_failures: [],
  fixed: [],
  preexisting_failures: [],
  duration_ms: 1,
  log_tail: '',
  ...over,
});

export const prOutput = (url: string, over: Partial<PrOutput> = {}): PrOutput => ({
  pr_url: url,
  number: Number(url.split('/').pop()) || 1,
  branch: 'emend/test',
  head: 'emend/test',
  base: 'main',
  commit: '0'.repeat(40),
  draft: false,
  drafts_disallowed: false,
  fork: null,
  ...over,
});
