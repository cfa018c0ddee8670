import type { StepRun } from './pipeline.js';
import { reasonOf, reasonText } from './reasons.js';
import type { InstanceResult } from './run.js';

const pct = (n: number, of: number) => (of === 0 ? '0.0%' : `${((100 * n) / of).toFixed(1)}%`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** An environment failure keeps the tests from running; a pipeline failure is the model's miss. */
const setUp = (r: InstanceResult) => r.setup.ok || r.setup.failure?.stage === 'pipeline';

const sum = (runs: StepRun[], pick: (s: StepRun) => number) => runs.reduce((n, s) => n + pick(s), 0);

/** One line per finished instance, for the log and the progress line. */
export function resultLine(r: InstanceResult): string {
  const failed = r.setup.failure;
  const verdict = r.resolved
    ? 'RESOLVED'
    : failed?.stage === 'pipeline'
      ? `PIPELINE FAILED (${failed.reason.split(':')[0]})`
      : failed
        ? `NOT SET UP (${reasonText(reasonOf(r) ?? { class: 'setup failed' })})`
        : 'not resolved';
  const edits = r.edits?.failures.length ? `, ${r.edits.failures.length} edit failure(s)` : '';
  const p = r.pipeline;
  const model = p
    ? `, gold file ${p.gold_located ? '' : 'not '}located, validator ${verdictWord(p.validator)}, ` +
      `${p.agent ? `${p.agent.turns} agent turns, ` : ''}` +
      `${p.choice && p.attempts ? `attempt ${p.choice.attempt} of ${p.attempts.length} chosen, ` : ''}` +
      `${sum(p.steps, (s) => s.input_tokens)}+${sum(p.steps, (s) => s.output_tokens)} tokens`
    : '';
  return (
    `${r.instance_id}: ${verdict}, F2P ${r.f2p.passed}/${r.f2p.total}, P2P ${r.p2p.passed}/${r.p2p.total}` +
    `${edits}${model}, ${secs(r.wall_ms)}`
  );
}

const verdictWord = (v: boolean | null | undefined) =>
  v === true ? 'passed' : v === false ? 'failed' : v === null ? 'no tests' : 'not run';

/**
 * summary.md: resolved % over all instances and over those whose tests ran, a table per
 * instance, then the edit-application failures and the setup failures with their reasons.
 */
export function summaryMarkdown(results: InstanceResult[], title: string): string {
  const resolved = results.filter((r) => r.resolved).length;
  const ran = results.filter(setUp);
  const wall = results.reduce((sum, r) => sum + r.wall_ms, 0);
  const lines = [
    `# ${title}`,
    '',
    `- instances: ${results.length}`,
    `- resolved: ${resolved} (${pct(resolved, results.length)} of all, ` +
      `${pct(ran.filter((r) => r.resolved).length, ran.length)} of the ${ran.length} set up)`,
    `- not set up: ${results.length - ran.length}` +
      (results.some((r) => r.pipeline) ? ' (a pipeline failure counts as set up and not resolved)' : ''),
    `- wall time: ${secs(wall)} in total, summed over instances`,
    ...clockLine(results, ran.length),
    ...timeFigures(results),
    ...modelFigures(results),
    ...reasonCounts(results),
    '',
    '| instance | resolved | F2P | P2P | edits | setup | time | why not |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const edits = r.edits ? `${r.edits.applied} applied, ${r.edits.failures.length} failed` : '–';
    const setup = r.setup.failure ? `failed (${r.setup.failure.stage})` : r.setup.command ? 'ok' : 'none';
    const reason = reasonOf(r);
    lines.push(
      `| ${r.instance_id} | ${r.resolved ? 'yes' : 'no'} | ${r.f2p.passed}/${r.f2p.total} | ` +
        `${r.p2p.passed}/${r.p2p.total} | ${edits} | ${setup} | ${secs(r.wall_ms)} | ${reason ? reasonText(reason) : ''} |`,
    );
  }
  const editFailures = results.filter((r) => r.edits?.failures.length);
  if (editFailures.length > 0) {
    lines.push('', '## Edit-application failures', '');
    for (const r of editFailures) for (const f of r.edits!.failures) lines.push(`- ${r.instance_id}: ${cell(f)}`);
  }
  lines.push(...modelSections(results));
  const setupFailures = results.filter((r) => r.setup.failure && r.setup.failure.stage !== 'pipeline');
  if (setupFailures.length > 0) {
    lines.push('', '## Setup failures', '');
    for (const r of setupFailures)
      lines.push(`- ${r.instance_id} (${r.setup.failure!.stage}): ${cell(r.setup.failure!.reason)}`);
  }
  const unresolved = results.filter((r) => r.setup.ok && !r.resolved);
  if (unresolved.length > 0) {
    lines.push('', '## Tests that did not pass', '');
    for (const r of unresolved) {
      const shown = r.not_passed.slice(0, 10).map((id) => `\`${cell(id)}\``);
      const more = r.not_passed.length > 10 ? `, and ${r.not_passed.length - 10} more` : '';
      lines.push(`- ${r.instance_id}: ${shown.join(', ')}${more}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

const usd = (n: number) => `$${n.toFixed(4)}`;

/** The value below which `p` of the values lie (nearest rank); 0 for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

/** Setup (environment: toolchains, install or the cache's copy) and test times per instance: median and p90. */
function timeFigures(results: InstanceResult[]): string[] {
  const setup = results.flatMap((r) => (r.times ? [r.times.setup_ms] : []));
  const tests = results.flatMap((r) => (r.times?.tests_ms !== undefined ? [r.times.tests_ms] : []));
  const line = (what: string, ms: number[]) =>
    `- ${what}: median ${secs(median(ms))}, p90 ${secs(percentile(ms, 0.9))} (${ms.length} instance(s))`;
  return [...(setup.length ? [line('setup time', setup)] : []), ...(tests.length ? [line('test time', tests)] : [])];
}

/** How many instances were not resolved for each reason class, the most common first. */
function reasonCounts(results: InstanceResult[]): string[] {
  const counts = new Map<string, string[]>();
  for (const r of results) {
    const reason = reasonOf(r);
    if (reason) counts.set(reasonText(reason), [...(counts.get(reasonText(reason)) ?? []), r.instance_id]);
  }
  if (counts.size === 0) return [];
  return [
    '- not resolved, by reason:',
    ...[...counts.entries()]
      .sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]))
      .map(([text, ids]) => `  - ${text}: ${ids.length} (${ids.slice(0, 8).join(', ')}${ids.length > 8 ? ', …' : ''})`),
  ];
}

/** The middle value (the mean of the two middle ones for an even count); 0 for none. */
export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The model mode's totals: gold file located, edit failures, validator against judge, tokens, cost. */
function modelFigures(results: InstanceResult[]): string[] {
  const runs = results.filter((r) => r.pipeline);
  if (runs.length === 0) return [];
  const steps = runs.flatMap((r) => r.pipeline!.steps);
  const located = runs.filter((r) => r.pipeline!.gold_located).length;
  const compared = runs.filter((r) => r.pipeline!.agrees !== null);
  const noVerdict = runs.filter((r) => r.pipeline!.validator === null).length;
  const agreed = compared.filter((r) => r.pipeline!.agrees).length;
  const sentBack = sum(
    steps.filter((s) => s.step === 'fixer'),
    (s) => s.sent_back,
  );
  const failedEdits = runs.reduce((n, r) => n + (r.edits?.failures.length ?? 0), 0);
  const models = [...new Set(runs.map((r) => r.pipeline!.model).filter(Boolean))].join(', ') || 'none called';
  const unpriced = steps.some((s) => s.cost_usd === null);
  const cost = unpriced
    ? 'unknown (the price table does not know the model; EMEND_MODEL_PRICES)'
    : usd(sum(steps, (s) => s.cost_usd ?? 0));
  const agent = runs.filter((r) => r.pipeline!.agent);
  const turns = agent.map((r) => r.pipeline!.agent!.turns);
  return [
    `- model: ${models}`,
    ...(agent.length
      ? [
          `- fixer: agent; turns ${turns.reduce((n, t) => n + t, 0)} in all, median ${median(turns)} per instance; ` +
            `submitted in ${agent.filter((r) => r.pipeline!.agent!.submitted > 0).length} of ${agent.length}`,
        ]
      : []),
    `- gold file located: ${located} (${pct(located, runs.length)})`,
    `- edit-application failures: ${failedEdits} in ${runs.filter((r) => r.edits?.failures.length).length} ` +
      'instance(s) (blocks still refused when the fixer stopped)',
    `- fixer answers sent back: ${sentBack} (edits that did not apply, a format problem, a cut-off answer)`,
    `- pipeline failures: ${runs.filter((r) => r.pipeline!.failure).length}`,
    `- validator agrees with the judge: ${agreed} of ${compared.length} (${pct(agreed, compared.length)}); ` +
      `no validator verdict on ${noVerdict} (it found no tests it could run; see results.jsonl \`validation\`)`,
    `- tokens: ${sum(steps, (s) => s.input_tokens)} input, ${sum(steps, (s) => s.output_tokens)} output`,
    `- cost: ${cost}`,
  ];
}

/** Per step and per instance tables of the model mode, and the pipeline failures with their reasons. */
function modelSections(results: InstanceResult[]): string[] {
  const runs = results.filter((r) => r.pipeline);
  if (runs.length === 0) return [];
  const lines = [
    '',
    '## Per step',
    '',
    '| step | runs | failed | input tokens | output tokens | cost | time |',
    '|---|---|---|---|---|---|---|',
  ];
  const steps = runs.flatMap((r) => r.pipeline!.steps);
  for (const name of [...new Set(steps.map((s) => s.step))]) {
    const of = steps.filter((s) => s.step === name);
    const cost = of.some((s) => s.cost_usd === null) ? '?' : usd(sum(of, (s) => s.cost_usd ?? 0));
    lines.push(
      `| ${name} | ${of.length} | ${of.filter((s) => s.status === 'failed').length} | ${sum(of, (s) => s.input_tokens)} | ` +
        `${sum(of, (s) => s.output_tokens)} | ${cost} | ${secs(sum(of, (s) => s.ms))} |`,
    );
  }
  lines.push(
    '',
    '## Per instance (model)',
    '',
    '| instance | gold file located | validator | judge | agrees | tokens in/out | cost |',
    '|---|---|---|---|---|---|---|',
  );
  for (const r of runs) {
    const p = r.pipeline!;
    const cost = p.steps.some((s) => s.cost_usd === null) ? '?' : usd(sum(p.steps, (s) => s.cost_usd ?? 0));
    const judge = r.setup.ok ? (r.resolved ? 'resolved' : 'not resolved') : 'not judged';
    lines.push(
      `| ${r.instance_id} | ${p.gold_located ? 'yes' : 'no'} | ${verdictWord(p.validator)} | ${judge} | ` +
        `${p.agrees === null ? '–' : p.agrees ? 'yes' : 'no'} | ${sum(p.steps, (s) => s.input_tokens)}/` +
        `${sum(p.steps, (s) => s.output_tokens)} | ${cost} |`,
    );
  }
  lines.push(...agentSection(runs), ...attemptsSection(runs));
  const failures = runs.filter((r) => r.pipeline!.failure);
  if (failures.length > 0) {
    lines.push('', '## Pipeline failures', '');
    for (const r of failures)
      lines.push(`- ${r.instance_id} (${r.pipeline!.failure!.step}): ${cell(r.pipeline!.failure!.reason)}`);
  }
  return lines;
}

/** Whose date the tests ran at (`--clock`): said once, for the instances whose tests ran. */
function clockLine(results: InstanceResult[], ran: number): string[] {
  if (ran === 0) return [];
  const dated = results.filter((r) => r.clock !== undefined).length;
  if (dated === 0) return ["- tests' clock: today's date"];
  const today = results.filter((r) => (r.passed_today?.length ?? 0) > 0);
  const again =
    today.length > 0
      ? `; listed tests that passed only at today's date, where they ran again: ${today
          .map((r) => `${r.instance_id} (${r.passed_today!.length})`)
          .join(', ')}`
      : '';
  return [`- tests' clock: each base commit's date (${dated} of the ${ran} set up; libfaketime)${again}`];
}

/** The agent fixer per instance: turns, tool calls, tokens and cost of the whole run, its wall time; medians last. */
function agentSection(runs: InstanceResult[]): string[] {
  const agent = runs.filter((r) => r.pipeline!.agent);
  if (agent.length === 0) return [];
  const lines = [
    '',
    '## Agent fixer per instance',
    '',
    "Turns are the fixer's model calls over its runs; tool calls by tool; tokens and cost are the whole " +
      "pipeline's (every step); time is the instance's wall time (checkout, pipeline, judge).",
    '',
    '| instance | resolved | turns | bash | editor | submit | fixer runs | tokens in/out | cost | time |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const costOf = (r: InstanceResult) =>
    r.pipeline!.steps.some((s) => s.cost_usd === null) ? null : sum(r.pipeline!.steps, (s) => s.cost_usd ?? 0);
  for (const r of agent) {
    const p = r.pipeline!;
    const a = p.agent!;
    const cost = costOf(r);
    lines.push(
      `| ${r.instance_id} | ${r.resolved ? 'yes' : 'no'} | ${a.turns} | ${a.tools.bash ?? 0} | ${a.tools.editor ?? 0} | ` +
        `${a.submitted} | ${a.runs} | ${sum(p.steps, (s) => s.input_tokens)}/${sum(p.steps, (s) => s.output_tokens)} | ` +
        `${cost === null ? '?' : usd(cost)} | ${secs(r.wall_ms)} |`,
    );
  }
  const costs = agent.map(costOf);
  const med = (pick: (r: InstanceResult) => number) => median(agent.map(pick));
  lines.push(
    `| **median** | | ${med((r) => r.pipeline!.agent!.turns)} | ${med((r) => r.pipeline!.agent!.tools.bash ?? 0)} | ` +
      `${med((r) => r.pipeline!.agent!.tools.editor ?? 0)} | | | ${med((r) => sum(r.pipeline!.steps, (s) => s.input_tokens))}/` +
      `${med((r) => sum(r.pipeline!.steps, (s) => s.output_tokens))} | ` +
      `${costs.some((c) => c === null) ? '?' : usd(median(costs as number[]))} | ${secs(med((r) => r.wall_ms))} |`,
  );
  return lines;
}

/**
 * `--attempts N`: per instance, each attempt's verdict (passed, failed, no tests, or the attempt
 * failed), the one chosen and why, and whether the judge resolved the chosen change; then how
 * often a passing attempt was there to choose (docs/agent.md, "Attempts").
 */
function attemptsSection(runs: InstanceResult[]): string[] {
  const tried = runs.filter((r) => r.pipeline!.attempts);
  if (tried.length === 0) return [];
  const word = (a: NonNullable<InstanceResult['pipeline']>['attempts'] & object) =>
    a.map(
      (x) => `${x.attempt}: ${x.status === 'failed' ? 'error' : verdictWord(x.passed)}${x.chosen ? ' (chosen)' : ''}`,
    );
  const lines = [
    '',
    '## Attempts per instance',
    '',
    '| instance | attempts | chosen | why | resolved |',
    '|---|---|---|---|---|',
  ];
  for (const r of tried) {
    const p = r.pipeline!;
    lines.push(
      `| ${r.instance_id} | ${cell(word(p.attempts!).join(', '))} | ${p.choice?.attempt ?? '–'} | ` +
        `${cell(p.choice?.reason ?? '')} | ${r.resolved ? 'yes' : 'no'} |`,
    );
  }
  const anyPassed = tried.filter((r) => r.pipeline!.attempts!.some((a) => a.passed === true)).length;
  lines.push(
    '',
    `A passing attempt was there to choose on ${anyPassed} of ${tried.length} instance(s); ` +
      `the chosen change resolved ${tried.filter((r) => r.resolved).length}.`,
  );
  return lines;
}
