import { afterEach, describe, expect, it } from 'vitest';
import { insertMemoryItem } from '../../src/memory/repo-memory.js';
import { CALC_REPO, editBlock, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';
import type { ModelRequest } from '../support/scripted-model/server.js';
import { BAKERY_BRIEF, scriptSiteRun } from '../support/site-script.js';

/*
 * Golden prompts: every model call of a fix run and of a scaffold run, driven through the engine
 * with the real steps against the scripted model, written whole (system text, then each message)
 * to prompts/__snapshots__/<name>.md. A change to any step's prompt shows up there as a diff to review;
 * after reviewing it, accept it with `npx vitest run test/steps/prompts -u`.
 *
 * What differs from run to run is replaced by placeholders before the comparison, so the files are
 * stable: temporary directories (<tmp>), loopback ports (<port>), UUIDs (<uuid>)
 * and ISO timestamps (<date>).
 */

let svc: ModelService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

function stable(text: string): string {
  return text
    .replace(/\/tmp\/[\w./-]+/g, '<tmp>')
    .replace(/\b(127\.0\.0\.1|localhost):\d+/g, '$1:<port>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<date>');
}

/** One call as a readable page: the system text, then each message under its role. */
function page(title: string, call: ModelRequest): string {
  const parts = [`# ${title}`, '', '======== system ========', call.system];
  for (const m of call.messages) parts.push('', `======== ${m.role} ========`, m.text);
  return `${stable(parts.join('\n'))}\n`;
}

const snapshot = (name: string, title: string, call: ModelRequest | undefined) => {
  expect(call, `no model call for ${name}`).toBeDefined();
  return expect(page(title, call!)).toMatchFileSnapshot(`./prompts/__snapshots__/${name}.md`);
};

describe('golden prompts of every step', { timeout: 180_000 }, () => {
  it('fix run: planner, re-rank, inspector, fixer round 1, round 2 after a failed edit, retry after validation', async () => {
    svc = await startModelService();
    const { h, model } = svc;
    // The repository's instructions to agents: the root's (planner and fixer) and the one nearest calc/ops.py (fixer).
    h.github.createRepo('acme', 'calc', {
      files: {
        ...CALC_REPO,
        'AGENTS.md': '# Agents\n\nRun `python3 -m pytest` before you finish.\n',
        'calc/AGENTS.md': 'Keep calc/ functions free of I/O.\n',
      },
    });
    // Round 1 quotes a line that is not in the file; round 2 fixes add() but breaks mul(); the
    // validator sends it back, and the retry repairs mul().
    const wrongSearch = editBlock('    return a - b  # subtract', '    return a + b');
    const breaksMul = editBlock(
      'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b',
      'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n\n\ndef mul(a, b):\n    return a + b',
    );
    const repairsMul = editBlock('def mul(a, b):\n    return a + b', 'def mul(a, b):\n    return a * b');
    const { fixerCalls } = scriptCalcRun(model, [
      `The subtraction should be an addition.\n\n${wrongSearch}`,
      breaksMul,
      repairsMul,
    ]);
    const { auth, account } = await newAccount(h, { plan: 'free' });
    const repoUrl = `${h.github.webUrl}/acme/calc`;
    // A reviewer's lesson on this repository, so that the memory sections show too.
    await insertMemoryItem(h.deps.db, new Date(), {
      workspaceId: account.id,
      repo: repoUrl,
      kind: 'lesson',
      content: { note: 'Keep the docstrings in calc/ops.py true to the code.', prompt: 'fix mul', files: [] },
    });
    const { logs } = await runFixTask(h, auth, repoUrl, 'done');
    expect(logs.map((l) => `${l.step}:${l.status}`)).toContain('validator:failed');
    const of = (step: string) => model.calls.filter((c) => stepOf(c) === step);
    const [round1, round2, retry] = fixerCalls();
    await snapshot('fix-planner', 'fix: planner', of('planner')[0]);
    await snapshot('fix-locator-rerank', 'fix: locator re-rank', of('locator')[0]);
    await snapshot('fix-inspector', 'fix: inspector', of('inspector')[0]);
    await snapshot('fix-fixer-1', 'fix: fixer, round 1', round1);
    await snapshot('fix-fixer-2-edit-failed', 'fix: fixer, round 2 (an edit did not apply)', round2);
    await snapshot('fix-fixer-retry-validation', 'fix: fixer, retry after a failed validation', retry);
  });

  it('scaffold run: site planner, site fixer, site fixer after a failed validation', async () => {
    svc = await startModelService();
    const { h, model } = svc;
    const { fixerCalls } = scriptSiteRun(model);
    const owner = await newAccount(h, { plan: 'free' });
    await runFixTask(h, owner.auth, '', 'done', { task_type: 'scaffold', prompt: BAKERY_BRIEF, repo_url: undefined });
    const [first, retry] = fixerCalls();
    await snapshot(
      'site-planner',
      'scaffold: site planner',
      model.calls.find((c) => stepOf(c) === 'planner'),
    );
    await snapshot('site-fixer', 'scaffold: site fixer', first);
    await snapshot('site-fixer-retry-validation', 'scaffold: site fixer after a failed validation', retry);
  });
});
