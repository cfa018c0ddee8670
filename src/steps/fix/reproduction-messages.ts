import type { ValidatorOutput } from '../../step-contract/index.js';

// The reproduction test in the fixer's words: the rule its system prompt gives, the signal a
// retry gets when the validator did not see the request reproduced, and the pull request's line.
// The validator's side is src/validator/reproduction.ts (docs/validator.md, "Reproduction test").

/** One rule of the fixer's system prompt. */
export const REPRODUCTION_RULE =
  'Add or extend a test that reproduces the request: it must fail on the code as it was and pass with your ' +
  'change (the validator runs it on both). If no test can be written, say why in one sentence before your blocks.';

const code = (ids: string[]) =>
  `${ids
    .slice(0, 5)
    .map((t) => `\`${t}\``)
    .join(', ')}${ids.length > 5 ? ` and ${ids.length - 5} more` : ''}`;

/** What the fixer's retry is told about its reproduction test; empty when that is not why it failed. */
export function reproductionSignal(failure: ValidatorOutput): string {
  const r = failure.reproduction;
  if (!r) return '';
  if (r.rule === 'no-new-failures')
    return 'Your change added or modified no test file: add a test that fails before your change and passes after it, or say why none can be written.';
  if (r.still_failing.length > 0)
    return `Your reproduction test still fails with your change: ${code(r.still_failing)}. Change the code so it passes (correct the test only if it asserts something the request does not ask for).`;
  if (r.now_passing.length > 0) return '';
  if (r.failed_on_base.length === 0)
    return `Your tests (${code(r.test_files)}) pass on the code as it was, before your change: they do not reproduce the request. Make a test assert what the request asks for, so that it fails without your fix.`;
  return `Your tests that failed before your change (${code(r.failed_on_base)}) were not reported passing with it.`;
}

/** The pull request's line on the reproduction: the tests that failed before and pass now, or why there is none. */
export function reproductionLine(v: ValidatorOutput | undefined): string {
  const r = v?.reproduction;
  if (!r || v?.passed !== true) return '';
  if (r.rule === 'no-new-failures') return 'No reproduction test: the change adds or modifies no test file.';
  return `Reproduction: ${code(r.now_passing)} (in ${code(r.test_files)}) failed before the change and pass${
    r.now_passing.length === 1 ? 'es' : ''
  } with it.`;
}
