import { createHash } from 'node:crypto';
import { editsFromUnifiedDiff } from '../../src/edits/from-diff.js';
import type { Edit } from '../../src/edits/types.js';
import type { Instance } from '../../src/eval/dataset.js';
import { isTestFile } from '../../src/text/test-paths.js';
import { type ReadBase, readerAtBase, structuredAnswer } from './eval-replay.js';
import { stepOf } from './fix-script.js';
import type { ModelRequest, Reply, ToolCallReply } from './scripted-model/types.js';

/**
 * A scripted agent for the agent fixer (`emend eval --fixer agent`, `npm run bench:eval-pipeline --
 * --fixer agent`): it answers the fixer's tool-using turns for each instance of a real data set as a
 * careful agent that already knows the answer would, so what is measured is the loop around the
 * model (tools, sandbox, editor, turn records, validator, judge), not a model:
 *
 * 1. `bash ls` — the checkout's top level;
 * 2. `bash grep -rn WORD .` — a word of the gold patch's first hunk (its longest identifier);
 * 3. `editor view` — the gold patch's first file;
 * 4. one turn per file of the gold patch, then of the test patch: `editor replace` for each hunk,
 *    pre-image to post-image (placed on the file at the base commit as the pipeline's replay does,
 *    src/edits/from-diff.ts), `editor create` for a new file, `bash rm` for a deleted one;
 * 5. `bash` the changed test files through the repository's test command (testCommand below);
 * 6. `submit`.
 *
 * A later conversation on the same instance (the fixer sent back after a failed verdict) submits at
 * once: the checkout already holds the change, so the last verdict is the validator's on it, as the
 * pipeline replay's later rounds leave the change's behaviour as it was. The planner, locator and
 * inspector are answered as in test/support/eval-replay.ts. Nothing here is per repository.
 */

const bash = (command: string): ToolCallReply => ({ name: 'bash', args: { command } });
const editor = (args: Record<string, unknown>): ToolCallReply => ({ name: 'editor', args });
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The files a unified diff changes, in order (its `+++` side, or `---` for a deletion). */
function diffFiles(diff: string): { path: string; deleted: boolean }[] {
  const out: { path: string; deleted: boolean }[] = [];
  for (const m of diff.matchAll(/^--- (\S+)[^\n]*\n\+\+\+ (\S+)/gm)) {
    const to = m[2]!.replace(/^b\//, '');
    const from = m[1]!.replace(/^a\//, '');
    out.push(to === '/dev/null' ? { path: from, deleted: true } : { path: to, deleted: false });
  }
  return out;
}

/** The longest identifier of the first hunk's changed lines (else its context): what an agent would grep for. */
export function grepWord(patch: string): string | undefined {
  const hunk = /^@@[^\n]*\n((?:[ +-][^\n]*\n?)*)/m.exec(patch)?.[1] ?? '';
  const lines = hunk.split('\n');
  const changed = lines.filter((l) => l.startsWith('-') || l.startsWith('+'));
  for (const group of [changed, lines]) {
    const words = group.join('\n').match(/[A-Za-z_$][\w$]{3,}/g) ?? [];
    if (words.length) return words.reduce((a, b) => (b.length > a.length ? b : a));
  }
  return undefined;
}

/** A command the opening message shows for running the tests (`Test command: \`…\``), if any. */
export function shownTestCommand(opening: string): string | undefined {
  return /\btests?\b[^`\n]{0,40}\b(?:command|with)\b[^`\n]{0,20}`([^`\n]+)`/i.exec(opening)?.[1]?.trim();
}

/**
 * How the agent runs the changed test files. The rule, for any repository:
 * - a test command the opening message shows, with the files after it (after `--` for an
 *   npm-style script runner, which passes what follows `--` to the script);
 * - else a package.json with a `test` script: the package manager its lockfile names
 *   (`npm test -- FILES`, `yarn test FILES`, `pnpm test FILES`): npm appends the files to the
 *   script's last command, which is where a runner's file arguments go;
 * - else a Python project (pyproject.toml, setup.py, setup.cfg, pytest.ini, tox.ini): `python -m
 *   pytest -q FILES`;
 * - else no test run (undefined).
 * The files are the test patch's files a runner collects (src/validator/test-files.ts), else its
 * others; none at all: the command alone.
 */
export function testCommand(instance: Instance, read: ReadBase, opening: string): string | undefined {
  const changed = diffFiles(instance.test_patch).filter((f) => !f.deleted);
  const collected = changed.filter((f) => isTestFile(f.path));
  const files = (collected.length ? collected : changed).map((f) => quote(f.path)).join(' ');
  const args = (npmStyle: boolean) => (files ? `${npmStyle ? ' --' : ''} ${files}` : '');
  const shown = shownTestCommand(opening);
  if (shown) return `${shown}${args(/^(npm|pnpm|yarn)\s+(test|run)\b/.test(shown) && !/\s--(\s|$)/.test(shown))}`;
  const pkg = read('package.json');
  if (pkg !== undefined) {
    let test: unknown;
    try {
      test = (JSON.parse(pkg) as { scripts?: Record<string, unknown> }).scripts?.test;
    } catch {
      test = undefined;
    }
    if (typeof test === 'string' && test.trim()) {
      if (read('pnpm-lock.yaml') !== undefined) return `pnpm test${args(false)}`;
      if (read('yarn.lock') !== undefined) return `yarn test${args(false)}`;
      return `npm test${args(true)}`;
    }
  }
  if (['pyproject.toml', 'setup.py', 'setup.cfg', 'pytest.ini', 'tox.ini'].some((f) => read(f) !== undefined))
    return `python -m pytest -q${args(false)}`;
  return undefined;
}

/** One turn's editor and bash calls for one file of a patch, from the edits placed on the base files. */
function fileTurn(path: string, edits: Edit[], read: ReadBase): ToolCallReply[] {
  const calls: ToolCallReply[] = [];
  for (const e of edits) {
    if (e.kind === 'delete') calls.push(bash(`rm -- ${quote(e.path)}`));
    else if (e.kind === 'create') calls.push(editor({ command: 'create', path: e.path, text: e.content }));
    else if (e.kind === 'rename')
      calls.push(bash(`mkdir -p -- "$(dirname -- ${quote(e.to)})" && mv -n -- ${quote(e.path)} ${quote(e.to)}`));
    else if (e.kind === 'mode') calls.push(bash(`chmod ${e.executable ? '+x' : '-x'} -- ${quote(e.path)}`));
    else if (e.kind === 'final-newline')
      calls.push(bash(e.present ? `sed -i -e '$a\\' -- ${quote(e.path)}` : `truncate -s -1 -- ${quote(e.path)}`));
    else if (e.search === '' && read(e.path) === undefined)
      calls.push(editor({ command: 'create', path: e.path, text: e.replace }));
    else calls.push(editor({ command: 'replace', path: e.path, old_text: e.search, new_text: e.replace }));
  }
  return calls.length ? calls : [editor({ command: 'view', path })];
}

/** The patch's edits grouped by file, in the patch's file order (a rename's deletion goes with its file). */
function turnsOfPatch(patch: string, read: ReadBase): { turns: ToolCallReply[][]; errors: string[] } {
  const { edits, errors } = editsFromUnifiedDiff(patch, read);
  const byFile = new Map<string, Edit[]>();
  for (const e of edits) byFile.set(e.path, [...(byFile.get(e.path) ?? []), e]);
  return { turns: [...byFile].map(([path, es]) => fileTurn(path, es, read)), errors };
}

export interface AgentScript {
  /** The turns of the first conversation, each one answer's tool calls, ending with submit. */
  turns: ToolCallReply[][];
  /** What the conversion could not say (a hunk with no place, a file missing), one line each. */
  errors: string[];
}

/** The scripted agent's first conversation on an instance: explore, view, edit per file, test, submit. */
export function agentScript(instance: Instance, read: ReadBase, opening: string): AgentScript {
  const gold = turnsOfPatch(instance.patch, read);
  const tests = turnsOfPatch(instance.test_patch, read);
  const first = diffFiles(instance.patch)[0];
  const word = grepWord(instance.patch);
  const turns: ToolCallReply[][] = [[bash('ls')]];
  if (word) turns.push([bash(`grep -rn --exclude-dir=node_modules --exclude-dir=.git -- ${quote(word)} . | head -20`)]);
  if (first && !first.deleted && read(first.path) !== undefined)
    turns.push([editor({ command: 'view', path: first.path })]);
  turns.push(...gold.turns, ...tests.turns);
  const command = testCommand(instance, read, opening);
  if (command) turns.push([bash(command)]);
  turns.push([{ name: 'submit', args: { summary: 'Applied the fix and its test; ran the changed tests.' } }]);
  return { turns, errors: [...gold.errors, ...tests.errors] };
}

const SUBMIT_AGAIN: ToolCallReply = {
  name: 'submit',
  args: { summary: 'No further change: the change in the checkout stands.' },
};

/** The agent says which instance it works on in its first scripted turn, so a shared prompt's later turns know. */
const MARKER = /Working on (\S+)\./;

/** The files either patch of an instance touches, for telling apart instances that share a problem statement. */
const touched = (i: Instance) => [...new Set([...diffFiles(i.patch), ...diffFiles(i.test_patch)].map((f) => f.path))];

/** What `sha1sum -- FILES` prints for the instance's base commit: a hash per file there, nothing for one missing. */
function expectedSums(read: ReadBase, files: string[]): Map<string, string | undefined> {
  return new Map(
    files.map((f) => {
      const text = read(f);
      return [f, text === undefined ? undefined : createHash('sha1').update(text).digest('hex')];
    }),
  );
}

/**
 * The instance a conversation is about. Data sets hold instances with the same problem statement
 * (one issue, two accepted fixes at two commits): the prompt alone cannot tell them apart, so the
 * agent's first turn on such a prompt hashes the files the candidates' patches touch, and the
 * candidate whose base commit holds exactly those files is the one (`probe` is that turn's call).
 */
function whichInstance(
  candidates: Instance[],
  req: ModelRequest,
  mirrors: string,
  started: ReadonlyMap<string, number>,
): { instance?: Instance; probe?: ToolCallReply; offset: number } {
  if (candidates.length === 1) return { instance: candidates[0], offset: 0 };
  // Named by the agent's own words once it knew (the first scripted turn's text).
  const named = req.messages
    .filter((m) => m.role === 'assistant')
    .map((m) => MARKER.exec(m.text)?.[1])
    .find(Boolean);
  const known = candidates.find((c) => c.instance_id === named);
  if (known) return { instance: known, offset: 1 };
  const files = [...new Set(candidates.flatMap(touched))].sort();
  const observation = req.messages.find((m) => m.role === 'tool')?.text;
  if (observation === undefined)
    return { probe: bash(`sha1sum -- ${files.map(quote).join(' ')} 2>/dev/null`), offset: 1 };
  const seen = new Map<string, string>();
  for (const m of observation.matchAll(/^([0-9a-f]{40}) {2}(\S+)$/gm)) seen.set(m[2]!, m[1]!);
  const matching = candidates.filter((c) =>
    [...expectedSums(readerAtBase(mirrors, c), files)].every(([f, sum]) => seen.get(f) === sum),
  );
  // Twins whose files are the same at both commits: the one not started yet.
  const instance = matching.find((c) => !started.has(c.instance_id)) ?? matching[0];
  return { ...(instance ? { instance } : {}), offset: 1 };
}

/**
 * The responder: the planner, locator and inspector as eval-replay's, the agent fixer's turns from
 * agentScript (the turn is the number of assistant messages the request already holds, less the
 * probe turn of a shared problem statement; a request with none opens a conversation), a later
 * conversation's first turn a submit, as is any turn past the script's end (the conversation
 * resumed after a failed verdict).
 */
export function agentAnswerer(mirrors: string, instances: Instance[]): (req: ModelRequest) => Reply | undefined {
  const conversations = new Map<string, number>();
  const scripts = new Map<string, AgentScript>();
  return (req) => {
    const step = stepOf(req);
    if (step !== 'fixer') return step ? structuredAnswer(step) : undefined;
    const candidates = instances.filter((i) => req.text.includes(i.problem_statement.trim().slice(0, 160)));
    if (candidates.length === 0) return { status: 400, body: 'bench: no instance for this prompt' };
    if (!req.tools.includes('bash')) return { status: 400, body: 'bench: the scripted agent answers the agent fixer' };
    const { instance, probe, offset } = whichInstance(candidates, req, mirrors, conversations);
    if (probe) return { toolCalls: [probe] };
    if (!instance) return { status: 400, body: 'bench: the files match none of the instances of this prompt' };
    const id = instance.instance_id;
    const turn = req.messages.filter((m) => m.role === 'assistant').length - offset;
    if (turn === 0) conversations.set(id, (conversations.get(id) ?? 0) + 1);
    if ((conversations.get(id) ?? 1) > 1) return { toolCalls: [SUBMIT_AGAIN] };
    let script = scripts.get(id);
    if (!script) {
      const opening = req.messages.find((m) => m.role === 'user')?.text ?? '';
      script = agentScript(instance, readerAtBase(mirrors, instance), opening);
      scripts.set(id, script);
    }
    const calls = script.turns[Math.min(turn, script.turns.length - 1)]!;
    return turn === 0 ? { toolCalls: calls, text: `Working on ${id}.` } : { toolCalls: calls };
  };
}
