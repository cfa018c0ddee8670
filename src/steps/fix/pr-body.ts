import type { FixOutputs } from '../../step-contract/index.js';
import type { Task } from '../../tasks/service.js';
import { reproductionLine } from './reproduction-messages.js';

/** The PR title: the plan's summary (first sentence), or the prompt, at most 72 characters. */
export function pullTitle(task: Pick<Task, 'prompt'>, plan: { summary?: string } | undefined): string {
  const source = (plan?.summary?.trim() || task.prompt.trim()).split('\n')[0]!;
  const sentence = source.replace(/^(.{20,}?[.!?])\s.*$/, '$1').replace(/\.$/, '');
  return sentence.length > 72 ? `${sentence.slice(0, 71).trimEnd()}…` : sentence;
}

function validationLine(v: FixOutputs['validator'] | undefined): string {
  if (!v) return 'Not validated.';
  if (v.passed === true) {
    const counts = v.tests ? ` (${v.tests.passed} passed, ${v.tests.failed} failed, ${v.tests.skipped} skipped)` : '';
    const fixed = v.fixed.length
      ? `; now passing: ${v.fixed
          .slice(0, 10)
          .map((t) => `\`${t}\``)
          .join(', ')}`
      : '';
    return `Passed: no new test failures with \`${v.command}\`${counts}${fixed}.`;
  }
  if (v.passed === false && v.new_failures.length === 0)
    return `**Did not pass** with \`${v.command}\`: ${v.reproduction?.note ?? v.message ?? 'see the validator output'}.`;
  if (v.passed === false)
    return `**Did not pass**: new failures with \`${v.command}\`: ${v.new_failures
      .slice(0, 10)
      .map((t) => `\`${t}\``)
      .join(', ')}.`;
  return `Not validated: ${v.message ?? 'no tests could be run'}.`;
}

/** The PR description: summary, files changed, the validator's result, the task id. */
export function pullBody(
  task: Pick<Task, 'id' | 'prompt'> & Partial<Pick<Task, 'trigger'>>,
  outputs: Pick<Partial<FixOutputs>, 'planner' | 'fixer' | 'validator'>,
  note?: string,
): string {
  // GitHub, GitLab and Gitea/Forgejo all close an issue of the same repository named so in the
  // description of the pull (merge) request that gets merged.
  const closes = task.trigger?.thread === 'issue' ? `Closes #${task.trigger.number}.` : '';
  const plan = outputs.planner;
  const files = outputs.fixer?.files_changed ?? [];
  return [
    note ? `> ${note}\n` : '',
    '## Summary',
    plan?.summary ?? task.prompt,
    plan?.steps?.length ? `\n${plan.steps.map((s) => `- ${s}`).join('\n')}` : '',
    '',
    '## Request',
    task.prompt
      .split('\n')
      .map((l) => `> ${l}`)
      .join('\n'),
    '',
    '## Files changed',
    files.length ? files.map((f) => `- \`${f.path}\` (${f.kind})`).join('\n') : '- (see the diff)',
    '',
    '## Validation',
    validationLine(outputs.validator),
    '',
    reproductionLine(outputs.validator),
    '',
    closes,
    '',
    `---\nOpened by emend for task \`${task.id}\`.`,
  ]
    .filter((line, i, all) => !(line === '' && all[i - 1] === ''))
    .join('\n');
}
