import type { ModelRequest, Reply, ScriptedModel } from './scripted-model/server.js';

export type ThinkingStep = 'planner' | 'locator' | 'inspector' | 'fixer';

/** Which step sent a request, from the role its system prompt gives the model. */
export function stepOf(req: ModelRequest): ThinkingStep | undefined {
  const m = /You are the (planner|locator|inspector|fixer) of emend/.exec(req.system);
  return m?.[1] as ThinkingStep | undefined;
}

/** A small Python repository with a bug in add() and pytest tests for it. */
export const CALC_REPO: Record<string, string> = {
  'README.md': '# calc\n\nTiny arithmetic helpers.\n',
  'pytest.ini': '[pytest]\ntestpaths = tests\n',
  'calc/__init__.py': '',
  'calc/ops.py':
    'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
  'calc/text.py': 'def shout(s):\n    return s.upper() + "!"\n',
  'tests/test_ops.py':
    'from calc.ops import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    ' +
    'assert mul(2, 3) == 6\n',
};

export const CALC_PROMPT = 'add() in calc/ops.py subtracts instead of adding; make add(2, 3) return 5';

export const CALC_PLAN = {
  summary: 'Make calc.ops.add return the sum instead of the difference.',
  steps: ['Change the return expression of add in calc/ops.py from a - b to a + b.'],
  likely_files: ['calc/ops.py'],
  new_files: [],
  test_strategy: 'Run pytest; tests/test_ops.py::test_add covers it.',
  risks: [],
};

export const CALC_INSIGHTS = {
  summary:
    'The bug is in add() in calc/ops.py (lines 1-3): it returns a - b. Returning a + b fixes it; ' +
    'tests/test_ops.py already checks it.',
  insights: [
    {
      file: 'calc/ops.py',
      relevance: 'high',
      symbols: [{ name: 'add', start_line: 1, end_line: 3, change: 'return a + b' }],
      notes: '',
    },
  ],
};

/** Edit blocks (docs/edit-format.md) for calc/ops.py. */
export const editBlock = (search: string, replace: string, path = 'calc/ops.py') =>
  `${path}\n\`\`\`\n<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n\`\`\`\n`;

const ADDITION = editBlock('    return a - b', '    return a + b');
export const GOOD_FIX = `The subtraction should be an addition.\n\n${ADDITION}`;

/** The locator's ranking in a scripted fix run on CALC_REPO. */
export const CALC_RANKING = [{ path: 'calc/ops.py', reason: 'defines add()' }];

/** The planner's, the locator's and the inspector's answers in a fix run on CALC_REPO; undefined for any other request. */
export function calcStepReply(req: ModelRequest, ranking = CALC_RANKING): Reply | undefined {
  switch (stepOf(req)) {
    case 'planner':
      return { json: CALC_PLAN };
    case 'locator':
      return { json: { ranking } };
    case 'inspector':
      return { json: CALC_INSIGHTS };
    default:
      return undefined;
  }
}

/**
 * Answers every thinking step of a fix run on CALC_REPO from a fixed script: the planner's
 * plan, the locator's ranking, the inspector's insights, then the fixer's answers: in order
 * (the last one repeats), or from a responder that reads the request. Tests queue extra
 * replies with model.enqueue to go first.
 */
export function scriptCalcRun(
  model: ScriptedModel,
  fixes: string[] | ((req: ModelRequest) => Reply) = [GOOD_FIX],
  ranking: { path: string; reason: string }[] = CALC_RANKING,
): { fixerCalls: () => ModelRequest[] } {
  let fixer = 0;
  const fixerReply = (req: ModelRequest): Reply =>
    typeof fixes === 'function' ? fixes(req) : { text: fixes[Math.min(fixer++, fixes.length - 1)]! };
  model.respond((req): Reply | undefined => (stepOf(req) === 'fixer' ? fixerReply(req) : calcStepReply(req, ranking)));
  return { fixerCalls: () => model.calls.filter((c) => stepOf(c) === 'fixer') };
}
