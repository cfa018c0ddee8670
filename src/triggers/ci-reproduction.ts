import type { TaskTriggerCi } from '../db/schema.js';
import type { ValidatorOutput } from '../step-contract/index.js';

/**
 * What a CI follow-up's answer says about the sandbox (docs/triggers.md, "CI follow-ups"): whether
 * the failing tests the CI log named failed in the sandbox before the change (the validator's run
 * on the pull request's head) and pass after it. A failure the sandbox did not reproduce is said,
 * not hidden: the change is then untested until CI runs again.
 */

/** The test's own name, as runners differ in how they prefix it (a file, suites, `::`, `>`, `.`). */
const leaf = (id: string) =>
  id
    .split(/\s*(?:>|::|›)\s*|\s+/)
    .filter(Boolean)
    .at(-1) ?? id;

/** Whether a CI log's test and a sandbox run's test are one: the same id, or one ending the other, or the same leaf. */
function same(ci: string, sandbox: string): boolean {
  if (ci === sandbox || ci.endsWith(sandbox) || sandbox.endsWith(ci)) return true;
  return leaf(ci) === leaf(sandbox) && leaf(ci).length >= 4;
}

const listed = (tests: string[]) =>
  tests.slice(0, 5).join(', ') + (tests.length > 5 ? ` and ${tests.length - 5} more` : '');

export function ciReproduction(ci: TaskTriggerCi, validator: ValidatorOutput | undefined): string {
  const untested = 'the change is untested until CI runs again';
  if (!validator || validator.command === null || validator.passed === null)
    return `The sandbox ran no tests for it, so the CI failure was not reproduced here: ${untested}.`;
  if (ci.tests.length === 0)
    return `The CI log names no failing test, so the sandbox could not reproduce the failure (it ran \`${validator.command}\`): ${untested}.`;
  const failedBefore = [...(validator.baseline?.failures ?? []), ...validator.fixed, ...validator.preexisting_failures];
  const reproduced = ci.tests.filter((t) => failedBefore.some((s) => same(t, s)));
  const missed = ci.tests.filter((t) => !reproduced.includes(t));
  const fixed = reproduced.filter((t) => validator.fixed.some((s) => same(t, s)));
  if (missed.length === 0 && fixed.length === reproduced.length)
    return `The sandbox reproduced the failure: ${listed(reproduced)} failed there before the change and pass${reproduced.length === 1 ? 'es' : ''} now.`;
  const parts: string[] = [];
  if (fixed.length > 0) parts.push(`The sandbox reproduced ${listed(fixed)} (failing before the change, passing now).`);
  const still = reproduced.filter((t) => !fixed.includes(t));
  if (still.length > 0) parts.push(`${listed(still)} still fail${still.length === 1 ? 's' : ''} in the sandbox.`);
  if (missed.length > 0)
    parts.push(
      `The sandbox could not reproduce the failure of ${listed(missed)} (${missed.length === 1 ? 'it' : 'they'} passed there before the change): ${untested}.`,
    );
  return parts.join(' ');
}
