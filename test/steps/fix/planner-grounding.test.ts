import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_PLAN, CALC_REPO, scriptCalcRun, stepOf } from '../../support/fix-script.js';
import { newAccount } from '../../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../../support/model-service.js';

// The planner plans from what the deterministic locator ranks and from the repository's own
// conventions files, read through the confined file module; the paths it invents are dropped.
const OUTSIDE_MARKER = 'outside-conventions-marker-41c7';
let svc: ModelService;
let outside: string;

function conventionsRepo(service: ModelService) {
  service.h.github.createRepo('acme', 'calc', {
    files: {
      ...CALC_REPO,
      'AGENTS.md': '# Agents\n\nRun `python3 -m pytest` before you finish.\nNever edit calc/__init__.py.\n',
      'CONTRIBUTING.md': `# Contributing\n\n${Array.from({ length: 120 }, (_, i) => `Rule ${i + 1}.`).join('\n')}\n`,
      '.editorconfig': 'root = true\n\n[*.py]\nindent_style = space\nindent_size = 4\n',
      'pyproject.toml':
        '[project]\nname = "calc"\nversion = "1.0"\n\n[tool.ruff]\nline-length = 99\n\n' +
        '[tool.ruff.lint]\nselect = ["E", "F"]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
      'setup.cfg': '[metadata]\nname = calc\n\n[flake8]\nmax-line-length = 99\n',
    },
    links: { 'CLAUDE.md': join(outside, 'CLAUDE.md') },
  });
}

beforeAll(async () => {
  // step log lines are written at debug level
  svc = await startModelService({ LOG_LEVEL: 'debug' });
  outside = mkdtempSync(join(tmpdir(), 'emend-conventions-'));
  writeFileSync(join(outside, 'CLAUDE.md'), `${OUTSIDE_MARKER}\n`);
  conventionsRepo(svc);
});
afterAll(async () => {
  await svc?.close();
  if (outside) rmSync(outside, { recursive: true, force: true });
});

describe('the grounded planner', { timeout: 150_000 }, () => {
  it('is shown ranked paths and conventions, and keeps only likely files that exist or are new', async () => {
    const { h, model } = svc;
    scriptCalcRun(model);
    const plan = {
      ...CALC_PLAN,
      likely_files: ['calc/ops.py', 'src/calc/operations.py', './tests/test_add.py', 'calc/made_up.py'],
      new_files: ['tests/test_add.py'],
    };
    model.enqueue({ json: plan });
    const { auth } = await newAccount(h, { plan: 'free' });
    const { byStep } = await runFixTask(h, auth, `${h.github.webUrl}/acme/calc`, 'done');

    const prompt = model.calls.find((c) => stepOf(c) === 'planner')!.messages[0]!.text;
    const ranked = /Files the search ranks highest for the request, best first, with why:\n((?:\d+\. .+\n)+)/.exec(
      prompt,
    );
    expect(ranked, prompt).not.toBeNull();
    expect(ranked![1]!.split('\n')[0]).toMatch(/^1\. calc\/ops\.py \(.+\)$/);
    expect(prompt).toContain('AGENTS.md:\n```\n# Agents\n\nRun `python3 -m pytest` before you finish.');
    expect(prompt).toContain('Rule 78.\n… (42 more lines)\n```');
    expect(prompt).not.toContain('Rule 79.');
    expect(prompt).toContain('.editorconfig:\n```\nroot = true');
    expect(prompt).toContain(
      'pyproject.toml:\n```\n[tool.ruff]\nline-length = 99\n\n[tool.ruff.lint]\nselect = ["E", "F"]\n```',
    );
    expect(prompt).toContain('setup.cfg:\n```\n[flake8]\nmax-line-length = 99\n```');
    expect(prompt).toContain(`CLAUDE.md: symlink -> ${join(outside, 'CLAUDE.md')} (not followed)`);
    expect(prompt).not.toContain(OUTSIDE_MARKER);

    const planned = byStep('planner')[0]!.output;
    expect(planned.likely_files).toEqual(['calc/ops.py', 'tests/test_add.py']);
    expect(planned.new_files).toEqual(['tests/test_add.py']);
    const dropped = h.logLines.find((l) => l.includes('likely files not in the checkout dropped'));
    expect(dropped).toContain('src/calc/operations.py');
    expect(dropped).toContain('calc/made_up.py');
    // the planner built the locator's index; the locator step loaded it
    expect(byStep('locator')[0]!.output.index).toMatchObject({ cache: 'hit' });
  });
});

describe('the grounded planner of a model with a small window', { timeout: 150_000 }, () => {
  it('is given fewer conventions files, saying so, rather than a prompt that cannot fit', async () => {
    const small = await startModelService({ EMEND_MODEL_CONTEXT_PLANNER: '2900' });
    try {
      conventionsRepo(small);
      scriptCalcRun(small.model);
      const { auth } = await newAccount(small.h, { plan: 'free' });
      await runFixTask(small.h, auth, `${small.h.github.webUrl}/acme/calc`, 'done');
      const prompt = small.model.calls.find((c) => stepOf(c) === 'planner')!.messages[0]!.text;
      expect(prompt).toMatch(/Conventions files:\n(.|\n)*… \(\d more conventions file\(s\) left out for space\)/);
      expect(prompt).not.toContain('Rule 1.');
    } finally {
      await small.close();
    }
  });
});
