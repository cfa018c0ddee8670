import type { InstanceResult } from './run.js';

const pct = (n: number, of: number) => (of === 0 ? '0.0%' : `${((100 * n) / of).toFixed(1)}%`);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** One line per finished instance, for the log and the progress line. */
export function resultLine(r: InstanceResult): string {
  const verdict = r.resolved ? 'RESOLVED' : r.setup.failure ? `NOT SET UP (${r.setup.failure.stage})` : 'not resolved';
  const edits = r.edits?.failures.length ? `, ${r.edits.failures.length} edit failure(s)` : '';
  return (
    `${r.instance_id}: ${verdict}, F2P ${r.f2p.passed}/${r.f2p.total}, P2P ${r.p2p.passed}/${r.p2p.total}` +
    `${edits}, ${secs(r.wall_ms)}`
  );
}

/**
 * summary.md: resolved % over all instances and over those whose tests ran, a table per
 * instance, then the edit-application failures and the setup failures with their reasons.
 */
export function summaryMarkdown(results: InstanceResult[], title: string): string {
  const resolved = results.filter((r) => r.resolved).length;
  const ran = results.filter((r) => r.setup.ok);
  const wall = results.reduce((sum, r) => sum + r.wall_ms, 0);
  const lines = [
    `# ${title}`,
    '',
    `- instances: ${results.length}`,
    `- resolved: ${resolved} (${pct(resolved, results.length)} of all, ` +
      `${pct(ran.filter((r) => r.resolved).length, ran.length)} of the ${ran.length} set up)`,
    `- not set up: ${results.length - ran.length}`,
    `- wall time: ${secs(wall)} in total, summed over instances`,
    '',
    '| instance | resolved | F2P | P2P | edits | setup | time |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const edits = r.edits ? `${r.edits.applied} applied, ${r.edits.failures.length} failed` : '–';
    const setup = r.setup.failure ? `failed (${r.setup.failure.stage})` : r.setup.command ? 'ok' : 'none';
    lines.push(
      `| ${r.instance_id} | ${r.resolved ? 'yes' : 'no'} | ${r.f2p.passed}/${r.f2p.total} | ` +
        `${r.p2p.passed}/${r.p2p.total} | ${edits} | ${setup} | ${secs(r.wall_ms)} |`,
    );
  }
  const editFailures = results.filter((r) => r.edits?.failures.length);
  if (editFailures.length > 0) {
    lines.push('', '## Edit-application failures', '');
    for (const r of editFailures) for (const f of r.edits!.failures) lines.push(`- ${r.instance_id}: ${cell(f)}`);
  }
  const setupFailures = results.filter((r) => r.setup.failure);
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
