import { editBlock, stepOf } from './fix-script.js';
import type { ModelRequest, Reply, ScriptedModel } from './scripted-model/server.js';

// The scripted model's answers for a whole fix run on the instances of eval-instances.ts
// (acme/pycalc: calc.py; acme/srccalc: src/calc.py; acme/jscalc: src/lib.js, the same add() bug),
// as `emend eval` drives it.

/** The file of each instance's bug, as the fixer is shown it. */
const FILES = { python: 'calc.py', pysrc: 'src/calc.py', js: 'src/lib.js' } as const;
type Lang = keyof typeof FILES;

/** Which instance a request is about: by the source file its prompt names (the tree, the shortlist, the files). */
const langOf = (req: ModelRequest): Lang =>
  req.text.includes(FILES.js) ? 'js' : req.text.includes(FILES.pysrc) ? 'pysrc' : 'python';

const plan = {
  summary: 'Make add() return the sum of its arguments instead of their difference.',
  steps: ['Change the return expression of add from a - b to a + b.'],
  // Only the file that exists in the checkout is kept (the planner drops the others).
  likely_files: Object.values(FILES),
  new_files: [],
  test_strategy: 'Run the existing tests.',
  risks: [],
};

const insights = (lang: Lang) => ({
  summary: `add() in ${FILES[lang]} subtracts; it should add.`,
  insights: [
    {
      file: FILES[lang],
      relevance: 'high',
      symbols: [{ name: 'add', start_line: 1, end_line: 2, change: 'return a + b' }],
      notes: '',
    },
  ],
});

/** The fixer's answer for an instance: the right fix, or one that makes add() multiply. */
export function evalFix(lang: Lang, right = true): string {
  const op = right ? '+' : '*';
  const block =
    lang !== 'js'
      ? editBlock('    return a - b', `    return a ${op} b`, FILES[lang])
      : editBlock('exports.add = (a, b) => a - b;', `exports.add = (a, b) => a ${op} b;`, FILES.js);
  return `add() subtracts; it should ${right ? 'add' : 'multiply'}.\n\n${block}`;
}

/**
 * Answers every thinking step of a fix run on the eval instances: the plan, the re-rank, the
 * inspector's insights, and the fixer's answer from `fixer` (by the instance's language).
 * Tests queue replies with model.enqueue to go first (an error for the first call, say).
 */
export function scriptEvalRun(
  model: ScriptedModel,
  fixer: (lang: Lang, req: ModelRequest) => string = (lang) => evalFix(lang),
) {
  model.respond((req): Reply | undefined => {
    const lang = langOf(req);
    switch (stepOf(req)) {
      case 'planner':
        return { json: plan };
      case 'locator':
        return { json: { ranking: [{ path: FILES[lang], reason: 'defines add()' }] } };
      case 'inspector':
        return { json: insights(lang) };
      case 'fixer':
        return { text: fixer(lang, req) };
      default:
        return undefined;
    }
  });
}
