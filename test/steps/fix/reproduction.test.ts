import { describe, expect, it } from 'vitest';
import type { Reproduction, ValidatorOutput } from '../../../src/step-contract/index.js';
import { failureSection } from '../../../src/steps/fix/fixer.js';
import { pullBody } from '../../../src/steps/fix/pr-body.js';

// What the fixer and the pull request are told of the validator's reproduction verdict; the
// verdicts themselves come from real runs in test/validator/reproduction.test.ts.

const ID = 'tests/test_mean.py::test_mean_halves';
const FILE = 'tests/test_mean.py';

const output = (passed: boolean, reproduction: Partial<Reproduction>): ValidatorOutput => ({
  command: 'python3 -m pytest -v',
  setup: null,
  passed,
  new_failures: reproduction.still_failing ?? [],
  fixed: reproduction.now_passing ?? [],
  preexisting_failures: [],
  duration_ms: 10,
  log_tail: 'the end',
  reproduction: {
    rule: 'reproduction',
    test_files: [FILE],
    failed_on_base: [],
    now_passing: [],
    still_failing: [],
    note: 'the note',
    ...reproduction,
  },
});

const task = { id: 'task-1', prompt: 'mean([1, 2]) is 1.5' };

describe('the reproduction, told to the fixer and in the pull request', () => {
  it("a retry is told that its reproduction test still fails, or that its tests pass on the base's code", () => {
    const still = failureSection(output(false, { failed_on_base: [ID], still_failing: [ID] }), undefined);
    expect(still).toContain(`Your reproduction test still fails with your change: \`${ID}\`.`);
    const passesOnBase = failureSection(output(false, {}), undefined);
    expect(passesOnBase).toContain(
      `Your tests (\`${FILE}\`) pass on the code as it was, before your change: they do not reproduce the request.`,
    );
    const noTest = failureSection(output(false, { rule: 'no-new-failures', test_files: [] }), undefined);
    expect(noTest).toContain('Your change added or modified no test file: add a test that fails before');
    // a reproduced change that failed on another test: the failing tests say it, no reproduction line
    const reproduced = failureSection(output(false, { failed_on_base: [ID], now_passing: [ID] }), undefined);
    expect(reproduced).not.toMatch(/reproduction test|do not reproduce|no test file/);
  });

  it('the pull request names the reproduction when the change passed, and says when there was none', () => {
    const body = pullBody(task, { validator: output(true, { failed_on_base: [ID], now_passing: [ID] }) });
    expect(body).toContain(`Reproduction: \`${ID}\` (in \`${FILE}\`) failed before the change and passes with it.`);
    const none = pullBody(task, { validator: output(true, { rule: 'no-new-failures', test_files: [] }) });
    expect(none).toContain('No reproduction test: the change adds or modifies no test file.');
    const failed = pullBody(task, { validator: output(false, { note: 'the tests pass on the base commit too' }) });
    expect(failed).toContain('**Did not pass** with `python3 -m pytest -v`: the tests pass on the base commit too.');
    expect(failed).not.toContain('Reproduction:');
  });
});
