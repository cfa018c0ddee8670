import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { evalCommand } from '../../src/cli/eval.js';
import type { InstanceResult } from '../../src/eval/run.js';
import { EDITOR_INPUT } from '../../src/steps/fix/agent/tools.js';
import { Editor } from '../../src/steps/fix/agent/editor.js';
import { agentAnswerer, agentScript, grepWord, shownTestCommand, testCommand } from '../support/eval-agent-replay.js';
import {
  type EvalInstance,
  type InstanceSpec,
  buildInstance,
  jsSpec,
  pythonSpec,
  removeEvalRepos,
  writeDataset,
} from '../support/eval-instances.js';
import { readerAtBase } from '../support/eval-replay.js';
import { GIT_ENV } from '../support/fixture-repos.js';
import { type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';
import type { ToolCallReply } from '../support/scripted-model/types.js';

const KEY = 'sk-eval-agent';

/** A repository whose fix changes two places of one file, deletes a file and adds one; its test patch changes a test file. */
const LIB = [
  'exports.add = (a, b) => a - b; // sum',
  ...Array.from({ length: 12 }, (_, i) => `exports.helper${i} = (a) => a + ${i};`),
  'exports.mul = (a, b) => a * a;',
  '',
].join('\n');
const multiSpec: InstanceSpec = {
  repo: 'acme/multicalc',
  base: {
    'package.json': JSON.stringify({ name: 'multicalc', scripts: { test: 'node --test' } }),
    'src/lib.js': LIB,
    'src/old.js': 'module.exports = 1;\n',
    'test/lib.test.js': "const test = require('node:test');\ntest('mul', () => {});\n",
  },
  fix: {
    'src/lib.js': LIB.replace('a - b', 'a + b').replace('a * a', 'a * b'),
    'src/old.js': null,
    'src/new.js': 'module.exports = 2;\n',
  },
  tests: { 'test/lib.test.js': "const test = require('node:test');\ntest('mul', () => {});\ntest('add', () => {});\n" },
  FAIL_TO_PASS: ['add'],
  PASS_TO_PASS: ['mul'],
};

const git = (dir: string, args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { env: GIT_ENV, encoding: 'utf8' });

describe('the scripted agent (test/support/eval-agent-replay.ts)', { timeout: 60_000 }, () => {
  let root: string;
  let mirrors: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'emend-eval-agent-unit-'));
    mirrors = join(root, 'mirrors');
  });
  afterAll(() => {
    removeEvalRepos();
    rmSync(root, { recursive: true, force: true });
  });

  /** The instance's base commit checked out from its mirror. */
  const checkout = (instance: EvalInstance, name: string) => {
    const dir = join(root, name);
    execFileSync('git', ['clone', '-q', join(mirrors, instance.repo.replace('/', '+')), dir], { env: GIT_ENV });
    git(dir, ['checkout', '-q', instance.base_commit]);
    return dir;
  };

  it('turns an instance into explore, view, one edit turn per file, the tests, submit; the edits leave the gold and test patches applied', async () => {
    const instance = buildInstance(mirrors, 'acme__multicalc-1', multiSpec);
    const read = readerAtBase(mirrors, instance);
    const { turns, errors } = agentScript(instance, read, 'Request:\n…');
    expect(errors).toEqual([]);
    const shape = turns.map((t) =>
      t.map((c) => `${c.name}:${String((c.args as { command?: string }).command).split(' ')[0]}`),
    );
    expect(shape).toEqual([
      ['bash:ls'],
      ['bash:grep'],
      ['editor:view'],
      ['editor:replace', 'editor:replace'],
      ['editor:create'],
      ['bash:rm'],
      ['editor:replace'],
      ['bash:npm'],
      ['submit:undefined'],
    ]);
    expect((turns[1]![0]!.args as { command: string }).command).toContain("-- 'exports' .");
    expect(turns[2]![0]!.args).toEqual({ command: 'view', path: 'src/lib.js' });
    expect(turns[7]![0]!.args).toEqual({ command: "npm test -- 'test/lib.test.js'" });

    // The script's calls run on a checkout of the base commit through the service's editor (and a
    // shell for rm): the files end as the gold patch and the test patch together leave them.
    const dir = checkout(instance, 'replayed');
    const editor = new Editor(dir, 20);
    for (const call of turns.flat() as ToolCallReply[]) {
      if (call.name === 'editor') {
        const done = await editor.run(EDITOR_INPUT.parse(call.args));
        expect(done.ok, done.observation).toBe(true);
      } else if (call.name === 'bash' && (call.args as { command: string }).command.startsWith('rm '))
        execFileSync('bash', ['-c', (call.args as { command: string }).command], { cwd: dir });
    }
    const expected = checkout(instance, 'patched');
    for (const patch of [instance.patch, instance.test_patch]) {
      writeFileSync(join(root, 'p.diff'), patch);
      git(expected, ['apply', join(root, 'p.diff')]);
    }
    git(dir, ['add', '-A']);
    git(expected, ['add', '-A']);
    expect(git(dir, ['diff', '--cached', '--stat'])).not.toBe('');
    expect(git(dir, ['write-tree'])).toBe(git(expected, ['write-tree']));
  });

  it('runs the tests as the repository does, or as the opening message shows', () => {
    const js = buildInstance(mirrors, 'acme__jscalc-1', jsSpec);
    const py = buildInstance(mirrors, 'acme__pycalc-1', {
      ...pythonSpec,
      base: { ...pythonSpec.base, 'pytest.ini': '[pytest]\n' },
    });
    expect(testCommand(js, readerAtBase(mirrors, js), '')).toBe("npm test -- 'test/add.test.js'");
    expect(testCommand(py, readerAtBase(mirrors, py), '')).toBe("python -m pytest -q 'tests/test_calc.py'");
    const shown = 'Request:\n…\n\nTest command: `npm run test:unit`\n';
    expect(testCommand(js, readerAtBase(mirrors, js), shown)).toBe("npm run test:unit -- 'test/add.test.js'");
    // A repository with no test script and no Python project: no test run, the script goes on to submit.
    const bare = { ...js, test_patch: js.test_patch };
    expect(testCommand(bare, (p) => (p === 'package.json' ? '{"scripts":{}}' : undefined), '')).toBeUndefined();
    expect(grepWord('@@ -1 +1 @@\n-exports.add = (a, b) => a - b;\n+exports.add = (a, b) => a + b;\n')).toBe('exports');
  });
});

// `emend eval --fixer agent` in model mode: the agent fixer's loop with the scripted agent over real
// HTTP, its commands in the bubblewrap sandbox, the validator and the judge as for the pipeline fixer.
describe('emend eval --fixer agent', { timeout: 240_000 }, () => {
  let root: string;
  let mirrors: string;
  let dataset: string;
  let model: ScriptedModel;
  let instances: EvalInstance[];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'emend-eval-agent-'));
    mirrors = join(root, 'mirrors');
    // The scripted agent tells instances apart by their problem statements, as a data set's differ.
    instances = [
      buildInstance(mirrors, 'acme__pycalc-1', pythonSpec),
      { ...buildInstance(mirrors, 'acme__jscalc-1', jsSpec), problem_statement: 'lib.add() of jscalc does not add' },
    ];
    dataset = join(root, 'data.jsonl');
    writeDataset(dataset, instances);
    model = await startScriptedModel({ validKeys: [KEY] });
  });
  afterAll(async () => {
    await model.close();
    removeEvalRepos();
    rmSync(root, { recursive: true, force: true });
  });

  async function run(args: string[]) {
    const out = join(root, `out-${Math.random().toString(36).slice(2)}`);
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => printed.push(line));
    vi.spyOn(console, 'error').mockImplementation((line: string) => printed.push(line));
    const env = {
      EMEND_DATA_DIR: join(root, 'data'),
      EMEND_SANDBOX: 'bubblewrap',
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: model.urls.openai,
      EMEND_LLM_RETRY_BASE_MS: '10',
    };
    const code = await evalCommand(['--out', out, '--mirrors', mirrors, '--dataset', dataset, ...args], env);
    vi.restoreAllMocks();
    const text = (f: string) => readFileSync(join(out, f), 'utf8');
    const results: InstanceResult[] = text('results.jsonl')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    return { code, printed: printed.join('\n'), summary: text('summary.md'), results };
  }

  it('the scripted agent resolves both instances; turns, tool calls and the test run are kept per instance', async () => {
    model.respond(agentAnswerer(mirrors, instances));
    const { code, printed, summary, results } = await run(['--fixer', 'agent']);
    expect(code, printed).toBe(0);
    expect(printed).toContain('agent fixer');
    for (const r of results) {
      expect(r.resolved, JSON.stringify(r)).toBe(true);
      const p = r.pipeline!;
      expect(p.fixer).toBe('agent');
      expect(p.steps.map((s) => s.step)).toEqual(['planner', 'locator', 'inspector', 'fixer', 'validator']);
      expect(p.validator).toBe(true);
      // ls, grep, view, the fix, the test, the tests run, submit.
      expect(p.agent).toMatchObject({
        turns: 7,
        tools: { bash: 3, editor: 3, submit: 1 },
        submitted: 1,
        runs: 1,
        editor_refused: 0,
        refusals: [],
      });
      // The tests run as the opening shows them (the validator's command), with the changed test file.
      const opening = model.calls.find(
        (c) => c.tools.includes('bash') && c.text.includes(r.instance_id.includes('py') ? 'calc.py' : 'lib.js'),
      )!.messages[0]!.text;
      const shown = shownTestCommand(opening);
      expect(shown, opening).toBeTruthy();
      const test = r.instance_id.includes('py') ? 'tests/test_calc.py' : 'test/add.test.js';
      expect(p.agent!.commands.map((c) => c.command)).toEqual([
        'ls',
        expect.stringMatching(/^grep -rn /),
        `${shown}${shown!.startsWith('npm') && !shown!.includes(' -- ') ? ' --' : ''} '${test}'`,
      ]);
      // The changed test ran in the sandbox and passed with the fix.
      expect(p.agent!.commands.at(-1)!.exit_code, JSON.stringify(p.agent)).toBe(0);
      expect(p.steps.find((s) => s.step === 'fixer')!.calls).toBe(7);
    }
    // The tool results went back to the model: the test run's output is in the last turn's request.
    const last = model.calls.filter((c) => c.tools.includes('bash')).at(-1)!;
    expect(last.messages.filter((m) => m.role === 'assistant')).toHaveLength(6);
    expect(summary).toContain('# emend eval (model, plan pro, agent fixer)');
    expect(summary).toMatch(/- fixer: agent; turns 14 in all, median 7 per instance; submitted in 2 of 2/);
    expect(summary).toMatch(/## Agent fixer per instance[\s\S]*\| acme__pycalc-1 \| yes \| 7 \| 3 \| 3 \| 1 \| 1 \|/);
    expect(summary).toMatch(/\| \*\*median\*\* \| \| 7 \| 3 \| 3 \|/);
  });

  it('tells apart two instances with one problem statement by the files at their commits', async () => {
    // One issue fixed at two commits: the same prompt; at the twin's commit add() lives in a file of its own.
    const twin: InstanceSpec = {
      ...jsSpec,
      repo: 'acme/jscalc-twin',
      base: {
        ...jsSpec.base,
        'src/lib.js': "exports.add = require('./add.js');\nexports.mul = (a, b) => a * b;\n",
        'src/add.js': 'module.exports = (a, b) => a - b;\n',
      },
      fix: { 'src/add.js': 'module.exports = (a, b) => a + b;\n' },
    };
    const statement = 'lib.add() does not add, again';
    const twins = [
      { ...buildInstance(mirrors, 'acme__jscalc-twin-1', twin), problem_statement: statement },
      {
        ...buildInstance(mirrors, 'acme__jscalc-2', { ...jsSpec, repo: 'acme/jscalc-two' }),
        problem_statement: statement,
      },
    ];
    writeDataset(dataset, twins);
    // Listed to the agent in the other order: without the files' hashes the first instance to run would get the other's script.
    model.respond(agentAnswerer(mirrors, [...twins].reverse()));
    const { code, printed, results } = await run(['--fixer', 'agent']);
    expect(code, printed).toBe(0);
    for (const r of results) {
      expect(r.resolved, JSON.stringify(r)).toBe(true);
      // The probe turn first, then the script of the instance its files name.
      expect(r.pipeline!.agent).toMatchObject({ turns: 8, editor_refused: 0 });
      expect(r.pipeline!.agent!.commands[0]!.command).toMatch(
        /^sha1sum -- 'src\/add\.js' 'src\/lib\.js' 'test\/add\.test\.js'/,
      );
    }
    writeDataset(dataset, instances);
  });

  it('--fixer is for the model mode and names a fixer there is', async () => {
    const printed: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => printed.push(line));
    expect(await evalCommand(['--dataset', dataset, '--oracle', '--fixer', 'agent'], {})).toBe(2);
    expect(await evalCommand(['--dataset', dataset, '--fixer', 'robot'], {})).toBe(2);
    expect(await evalCommand(['--dataset', dataset, '--fixer', 'agent', '--plan', 'free'], {})).toBe(2);
    vi.restoreAllMocks();
    expect(printed.join('\n')).toContain('--fixer is for the model mode');
    expect(printed.join('\n')).toContain('--fixer expects one of pipeline, agent');
    expect(printed.join('\n')).toContain('[--fixer pipeline|agent]');
    expect(printed.join('\n')).toContain('the free plan offers the pipeline fixer, not agent');
  });
});
