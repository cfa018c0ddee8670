import { describe, expect, it } from 'vitest';
import { DatasetError, parseDataset } from '../../src/eval/dataset.js';

const instance = {
  instance_id: 'acme__calc-1',
  repo: 'acme/calc',
  base_commit: 'a'.repeat(40),
  problem_statement: 'add() does not add',
  patch: 'diff --git a/x b/x\n',
  test_patch: 'diff --git a/t b/t\n',
  FAIL_TO_PASS: ['t.py::test_add'],
  PASS_TO_PASS: [],
};

describe('parseDataset', () => {
  it('reads arrays and JSON-encoded strings of test ids alike, skipping blank lines', () => {
    const encoded = { ...instance, instance_id: 'acme__calc-2', PASS_TO_PASS: '["t.py::test_mul"]' };
    const text = `${JSON.stringify(instance)}\n\n${JSON.stringify(encoded)}\n`;
    const [first, second] = parseDataset(text);
    expect(first!.FAIL_TO_PASS).toEqual(['t.py::test_add']);
    expect(second!.PASS_TO_PASS).toEqual(['t.py::test_mul']);
  });

  it('names the line and the field of a bad instance', () => {
    const bad = { ...instance, instance_id: 'acme__calc-2', FAIL_TO_PASS: 't.py::test_add' };
    const text = `${JSON.stringify(instance)}\n${JSON.stringify(bad)}\n`;
    expect(() => parseDataset(text, 'data.jsonl')).toThrow(DatasetError);
    expect(() => parseDataset(text, 'data.jsonl')).toThrow(/^data\.jsonl, line 2: field FAIL_TO_PASS /);
  });

  it('names a missing field, a malformed repo and a line that is not JSON', () => {
    const { test_patch: _, ...noTestPatch } = instance;
    expect(() => parseDataset(JSON.stringify(noTestPatch))).toThrow(/line 1: field test_patch /);
    expect(() => parseDataset(JSON.stringify({ ...instance, repo: 'calc' }))).toThrow(
      /line 1: field repo is not "owner\/name"/,
    );
    expect(() => parseDataset(`${JSON.stringify(instance)}\n{"instance_id": `)).toThrow(/line 2: not JSON/);
  });

  it('refuses an instance id given twice', () => {
    const line = JSON.stringify(instance);
    expect(() => parseDataset(`${line}\n${line}\n`)).toThrow(/line 2: instance_id acme__calc-1 appears twice/);
  });

  it('takes an instance without the gold patch (only the oracle needs it)', () => {
    const { patch: _, ...noPatch } = instance;
    expect(parseDataset(JSON.stringify(noPatch))[0]!.patch).toBe('');
  });
});
