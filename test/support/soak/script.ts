import { GOOD_FIX, editBlock, scriptCalcRun } from '../fix-script.js';
import type { ModelRequest, Reply, ScriptedModel } from '../scripted-model/server.js';

/** What the driver does with a task, and how the model answers its fixer. */
export type Kind = 'pr' | 'manual' | 'kill' | 'fails' | 'fails-once' | 'preview';

export const KIND_TAG = (kind: Kind, n: number) => `[soak ${n} ${kind}]`;

const PROMPT = 'add() in calc/ops.py subtracts instead of adding; make add(2, 3) return 5';
export const promptFor = (kind: Kind, n: number) => `${PROMPT} ${KIND_TAG(kind, n)}`;

// A fix that breaks mul while fixing add: the validator fails, the fixer's retry repairs mul.
const BREAKS_MUL = editBlock(
  'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b',
  'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n\n\ndef mul(a, b):\n    return a + b',
);
const REPAIRS_MUL = editBlock('def mul(a, b):\n    return a + b', 'def mul(a, b):\n    return a * b');
// An edit that never fixes anything, and still applies on top of itself: every validation fails.
const USELESS = editBlock('Tiny arithmetic helpers.', 'Tiny arithmetic helpers.\nSee the tests.', 'README.md');

function fixerReply(req: ModelRequest): Reply {
  const kind = /\[soak \d+ ([a-z-]+)\]/.exec(req.text)?.[1];
  // A retry carries the validator's failure, test_mul after BREAKS_MUL (the plan names test_add).
  const retry = req.text.includes('tests/test_ops.py::test_mul');
  if (kind === 'fails') return { text: `Touch the README.\n\n${USELESS}` };
  if (kind === 'fails-once') return { text: retry ? `Repair mul.\n\n${REPAIRS_MUL}` : `Fix add.\n\n${BREAKS_MUL}` };
  return { text: GOOD_FIX };
}

/** Answers every thinking step at once, the fixer by the task's kind (read from its prompt). */
export function scriptSoak(model: ScriptedModel) {
  scriptCalcRun(model, fixerReply);
}

/** A deterministic mix: mostly plain pull-request runs, with every kind spread through the run. */
export function taskKinds(n: number, mix: Partial<Record<Kind, number>>): Kind[] {
  const weights = Object.entries({ pr: 0, ...mix }) as [Kind, number][];
  const others = weights.filter(([k]) => k !== 'pr').reduce((a, [, w]) => a + w, 0);
  const table: [Kind, number][] = [...weights.filter(([k]) => k !== 'pr'), ['pr', Math.max(0, 1 - others)]];
  // Low-discrepancy spread: kind i gets floor((i+1)*w) - floor(i*w) slots as tasks go by.
  const counts = new Map<Kind, number>();
  const out: Kind[] = [];
  for (let i = 0; i < n; i++) {
    let best: Kind = 'pr';
    let bestDebt = -Infinity;
    for (const [k, w] of table) {
      const debt = (i + 1) * w - (counts.get(k) ?? 0);
      if (debt > bestDebt) {
        best = k;
        bestDebt = debt;
      }
    }
    counts.set(best, (counts.get(best) ?? 0) + 1);
    out.push(best);
  }
  return out;
}
