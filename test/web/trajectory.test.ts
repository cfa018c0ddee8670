import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { waitForStatus } from '../support/engine.js';
import { CALC_REPO, calcStepReply } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { postFixTask, startModelService } from '../support/model-service.js';
import type { Reply, ToolCallReply } from '../support/scripted-model/types.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/**
 * The agent fixer's trajectory on a task's page, in headless Chromium: the service on a real port
 * runs the agent fixer (EMEND_FIXER=agent) with the production steps, the scripted model answering
 * its turns with tool calls over HTTP, the real sandbox and checkout, and the fake GitHub.
 */
const panel = servePanel(
  () => startModelService({ EMEND_FIXER: 'agent', EMEND_AGENT_TURNS: '8', EMEND_AGENT_COMMAND_S: '15' }),
  (svc) => svc.h,
);

const bash = (command: string): ToolCallReply => ({ name: 'bash', args: { command } });
const FIX: ToolCallReply = {
  name: 'editor',
  args: { command: 'replace', path: 'calc/ops.py', old_text: '    return a - b', new_text: '    return a + b' },
};
const SUBMIT: ToolCallReply = { name: 'submit', args: { summary: 'add() returns a + b now.' } };

/** Markup a hostile repository puts where the model will read it: it must reach the page as text. */
const HOSTILE = `<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`;

/** Answers the planner, locator and inspector as a calc run does, and the fixer's turns with `turn(n)` (n from 0). */
function scriptAgent(turn: (n: number) => Reply | Promise<Reply>) {
  let n = 0;
  panel.service.model.respond((req) => (req.tools.includes('bash') ? turn(n++) : calcStepReply(req)));
}

async function calcRepo(name: string, files: Record<string, string> = CALC_REPO) {
  const owner = await newAccount(panel.h, { plan: 'pro', credits: 5 });
  panel.h.github.createRepo('acme', name, { files, collaborators: [owner.scm!.login] });
  return { owner, repoUrl: `${panel.h.github.webUrl}/acme/${name}` };
}

/** Each row of the trajectory: turn, tool, command or edit, result (the cells as the page shows them). */
const rowsOf = (page: Page) =>
  page
    .locator('.trajectory tbody tr')
    .evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].slice(0, 4).map((td) => (td.textContent ?? '').trim())),
    );

const statusOf = (page: Page) => page.locator('.facts .badge').first().getAttribute('data-status');

describe.skipIf(!haveChromium)('the control panel: the agent’s trajectory', { timeout: 180_000 }, () => {
  it('shows a finished task’s turns (tool, command or edit, exit code or ok, observation, tokens, cost), the repository’s markup as text', async () => {
    const { owner, repoUrl } = await calcRepo('calc-trajectory', { ...CALC_REPO, 'NOTES.md': `${HOSTILE}\n` });
    const turns: ToolCallReply[] = [
      bash('ls calc && grep -n "return a" calc/ops.py'),
      bash('grep -n "return a + b" calc/ops.py'),
      bash('cat NOTES.md'),
      FIX,
      { name: 'editor', args: { command: 'view', path: '../../etc/passwd' } },
      SUBMIT,
    ];
    scriptAgent((n) => ({ toolCalls: [turns[Math.min(n, turns.length - 1)]!] }));
    const id = await postFixTask(panel.h, owner.auth, repoUrl);
    const ended = await waitForStatus(panel.h, id, ['done', 'failed', 'cancelled'], 120_000);
    expect(ended.status, ended.error ?? '').toBe('done');

    // Opened after the task ended: the page reads the whole trajectory back.
    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    await page.goto(`/app/tasks/${id}`);
    await page.locator('[data-stream="ended"]').waitFor();
    const fixer = page.locator('.steps li[data-step="fixer"]');
    await fixer.getByRole('heading', { name: 'Agent trajectory' }).waitFor();
    const table = fixer.getByRole('table', { name: '6 turns' });
    expect(await table.locator('thead th').allInnerTexts()).toEqual([
      'Turn',
      'Tool',
      'Command or edit',
      'Result',
      'Observation',
      'Tokens',
      'Cost',
    ]);
    expect(await rowsOf(page)).toEqual([
      ['1', 'bash', 'ls calc && grep -n "return a" calc/ops.py', 'exit 0'],
      ['2', 'bash', 'grep -n "return a + b" calc/ops.py', 'exit 1'],
      ['3', 'bash', 'cat NOTES.md', 'exit 0'],
      ['4', 'editor', 'replace calc/ops.py', 'ok'],
      ['5', 'editor', 'view ../../etc/passwd', 'failed'],
      ['6', 'submit', '—', 'ok'],
    ]);

    // The observation is collapsed to its first line and opens whole.
    const first = table.locator('tbody tr[data-turn="1"] details');
    expect(await first.getAttribute('open')).toBeNull();
    await first.locator('summary').click();
    expect(await first.locator('pre').innerText()).toContain('3:    return a - b');
    const refused = table.locator('tbody tr[data-turn="5"] details');
    await refused.locator('summary').click();
    expect(await refused.locator('pre').innerText()).toContain('".." is refused');

    // The repository's markup is text: no element made of it, no script run, the very characters shown.
    const hostile = table.locator('tbody tr[data-turn="3"] details');
    expect(await hostile.locator('summary').innerText()).toContain('<img src=x onerror=');
    await hostile.locator('summary').click();
    expect(await hostile.locator('pre').innerText()).toContain(HOSTILE);
    expect(await page.locator('.task img, .task script').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');

    // Tokens and cost are the step's so far: they never go down, and the last is what the fixer spent.
    const tokens = (await table.locator('tbody tr td:nth-child(6)').allInnerTexts()).map(Number);
    expect(tokens.every((t, i) => t > 0 && (i === 0 || t >= tokens[i - 1]!))).toBe(true);
    expect(await table.locator('tbody tr td:nth-child(7)').allInnerTexts()).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\$\d/)]),
    );
    // The live log names each turn too.
    await page.locator('.log li[data-step="fixer"]', { hasText: 'turn 4: editor' }).waitFor();
    await screenshot(page, 'task-trajectory');
    expect(pageErrors).toEqual([]);
    await page.context().close();

    // Without the stream (it fails here), the task's read alone shows the trajectory.
    const bare = await panel.newPage();
    await bare.page.route('**/v1/tasks/*/logs/stream', (route) => route.abort());
    await signInWithKeyboard(bare.page, owner.token);
    await bare.page.goto(`/app/tasks/${id}`);
    await bare.page.locator('.trajectory tbody tr[data-turn="6"]').waitFor();
    expect(await rowsOf(bare.page)).toHaveLength(6);
    await bare.page.context().close();
  });

  it('shows each run of the fixer on its own: a retry after a failed verdict numbers its turns from 1', async () => {
    const { owner, repoUrl } = await calcRepo('calc-trajectory-retry');
    const swap = (from: string, to: string): ToolCallReply => ({
      name: 'editor',
      args: { command: 'replace', path: 'calc/ops.py', old_text: from, new_text: to },
    });
    // The first run fixes add() and breaks mul(): the validator fails it, and the second run repairs mul().
    const turns: ToolCallReply[] = [
      FIX,
      swap('    return a * b', '    return a + b'),
      SUBMIT,
      swap('def mul(a, b):\n    return a + b', 'def mul(a, b):\n    return a * b'),
      SUBMIT,
    ];
    scriptAgent((n) => ({ toolCalls: [turns[Math.min(n, turns.length - 1)]!] }));
    const id = await postFixTask(panel.h, owner.auth, repoUrl);
    const ended = await waitForStatus(panel.h, id, ['done', 'failed', 'cancelled'], 150_000);
    expect(ended.status, ended.error ?? '').toBe('done');

    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    await page.goto(`/app/tasks/${id}`);
    const fixer = page.locator('.steps li[data-step="fixer"]');
    await fixer.getByRole('table', { name: 'Run 2 of the fixer: 2 turns' }).waitFor();
    const run = (n: number) =>
      fixer
        .locator(`table[data-run="${n}"] tbody tr`)
        .evaluateAll((rows) => rows.map((r) => `${r.getAttribute('data-turn')} ${r.getAttribute('data-tool')}`));
    expect(await fixer.getByRole('table', { name: 'Run 1 of the fixer: 3 turns' }).count()).toBe(1);
    expect(await run(1)).toEqual(['1 editor', '2 editor', '3 submit']);
    expect(await run(2)).toEqual(['1 editor', '2 submit']);
    expect(pageErrors).toEqual([]);
    await page.context().close();
  });

  it('adds each turn live while the task runs', async () => {
    const { owner, repoUrl } = await calcRepo('calc-trajectory-live');
    // The second turn waits for the test: the first is on the page while the task is still running.
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    scriptAgent(async (n) => {
      if (n === 0) return { toolCalls: [FIX] };
      if (n === 1) {
        reached();
        await released;
        return { toolCalls: [bash('grep -c "return a + b" calc/ops.py')] };
      }
      return { toolCalls: [SUBMIT] };
    });
    const { page, pageErrors } = await panel.newPage();
    try {
      await signInWithKeyboard(page, owner.token);
      const id = await postFixTask(panel.h, owner.auth, repoUrl);
      await page.goto(`/app/tasks/${id}`);
      await atGate;
      const rows = page.locator('.trajectory tbody tr');
      await rows.first().waitFor({ timeout: 60_000 });
      expect(await rowsOf(page)).toEqual([['1', 'editor', 'replace calc/ops.py', 'ok']]);
      expect(await statusOf(page)).toBe('running');
      expect(await page.locator('[data-stream]').getAttribute('data-stream')).toBe('live');

      // The page is not read again: the next turns come over the stream it follows.
      release();
      await page.locator('.trajectory tbody tr[data-turn="3"]').waitFor({ timeout: 60_000 });
      await expect.poll(() => statusOf(page), { timeout: 90_000, interval: 250 }).toBe('done');
      expect(await rowsOf(page)).toEqual([
        ['1', 'editor', 'replace calc/ops.py', 'ok'],
        ['2', 'bash', 'grep -c "return a + b" calc/ops.py', 'exit 0'],
        ['3', 'submit', '—', 'ok'],
      ]);
      expect(pageErrors).toEqual([]);
    } finally {
      release();
      await page.context().close();
    }
  });
});
