import { describe, expect, it } from 'vitest';
import {
  DIFF_GATED_STEP,
  type FixerOutput,
  type PlannerOutput,
  REUSED_STEPS,
  parseFixOutputs,
  parseSiteOutputs,
  readProgress,
} from '../../src/step-contract/index.js';

const plan: PlannerOutput = {
  summary: 'change one line',
  steps: ['edit a.py'],
  likely_files: ['a.py'],
  test_strategy: 'run pytest',
  risks: [],
  memory_used: [],
  model: 'openai/gpt',
};
const fix: FixerOutput = {
  diff: '--- a/a.py\n+++ b/a.py\n',
  files_changed: [{ path: 'a.py', kind: 'modified' }],
  edits_applied: 1,
  edits_failed: [],
  rounds: 1,
  notes: '',
  memory_used: [],
  model: 'openai/gpt',
};

describe('step contract: outputs read back from the database', () => {
  it('keeps each output that parses and treats one that does not as absent', () => {
    // An old fixer row without files_changed: absent, while the planner's output still reads.
    const { files_changed: _gone, ...oldFixer } = fix;
    const outputs = parseFixOutputs({ planner: plan, fixer: oldFixer, locator: 'not an object' });
    expect(outputs.planner).toEqual(plan);
    expect(outputs.fixer).toBeUndefined();
    expect(outputs.locator).toBeUndefined();
    expect(parseFixOutputs({ planner: plan, fixer: fix }).fixer).toEqual(fix);
  });

  it('reads anything that is not an outputs object as no outputs', () => {
    for (const raw of [null, undefined, 'x', 42, []]) expect(parseFixOutputs(raw)).toEqual({});
  });

  it('reads a site plan only as a site plan: a fix plan is not one, nor the other way round', () => {
    const site = {
      title: 'Bakery',
      tagline: 'Fresh bread',
      audience: 'neighbours',
      sections: [{ id: 'hero', heading: 'Hello', purpose: 'greet', copy: 'Welcome' }],
      palette: { background: '#fff', surface: '#eee', text: '#000', accent: '#a00', accent_text: '#fff' },
      typography: { headings: 'serif', body: 'sans-serif' },
      model: 'openai/gpt',
    };
    expect(parseSiteOutputs({ planner: site }).planner).toEqual(site);
    expect(parseSiteOutputs({ planner: plan }).planner).toBeUndefined();
    expect(parseFixOutputs({ planner: site }).planner).toBeUndefined();
  });

  it('reads a progress row part by part, each part that does not fit falling back to its start value', () => {
    expect(readProgress(null)).toEqual({ outputs: {}, next: 'planner', approved: {} });
    const progress = readProgress({ outputs: { planner: plan }, next: 'nowhere', approved: { plan: true } });
    expect(progress).toMatchObject({ outputs: { planner: plan }, next: 'planner', approved: { plan: true } });
    expect(readProgress({ next: 'validator', baseCommit: 7 })).toMatchObject({
      next: 'validator',
      baseCommit: undefined,
    });
  });
});

describe('step contract: lists read from the descriptor', () => {
  it('a continued preview reuses the fix steps before the diff gate and starts at the gated step', () => {
    expect(REUSED_STEPS).toEqual(['planner', 'locator', 'inspector', 'fixer']);
    expect(DIFF_GATED_STEP).toBe('validator');
  });
});
