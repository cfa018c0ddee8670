import { describe, expect, it } from 'vitest';
import type { ValidatorOutput } from '../../../src/step-contract/index.js';
import { failureSection } from '../../../src/steps/fix/fixer.js';

const failed = (more: Partial<ValidatorOutput>): ValidatorOutput => ({
  command: 'pytest -v',
  setup: null,
  passed: false,
  new_failures: [],
  fixed: [],
  preexisting_failures: [],
  duration_ms: 10,
  log_tail: `${'noise\n'.repeat(2_000)}TAIL-END`,
  ...more,
});

describe("the fixer's retry feedback", () => {
  it('tells each failing test by its frame, test file and message, without the output tail', () => {
    const text = failureSection(
      failed({
        new_failures: ['tests/test_ops.py::test_mul', 'tests/test_io.py::test_read'],
        failure_details: [
          {
            test: 'tests/test_ops.py::test_mul',
            test_file: 'tests/test_ops.py',
            message: 'assert 5 == 6',
            frame: { path: 'calc/ops.py', line: 7 },
          },
        ],
      }),
      undefined,
    );
    expect(text).toContain(
      '- tests/test_ops.py::test_mul\n  test file: tests/test_ops.py\n  failed at calc/ops.py:7\n```\nassert 5 == 6\n```',
    );
    expect(text).toContain('- also failing: tests/test_io.py::test_read');
    expect(text).not.toContain('TAIL-END');
  });

  it('falls back to a short tail of the output when no failure could be parsed', () => {
    const text = failureSection(failed({ new_failures: ['(run) exited with code 2'] }), undefined);
    expect(text).toContain('- also failing: (run) exited with code 2');
    expect(text).toContain('TAIL-END');
    expect(text.length).toBeLessThan(4_000);
  });
});
