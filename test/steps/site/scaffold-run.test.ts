import { afterEach, describe, expect, it } from 'vitest';
import { editBlock, stepOf } from '../../support/fix-script.js';
import { newAccount } from '../../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../../support/model-service.js';
import { BAKERY_BRIEF, BAKERY_PLAN, scriptSiteRun } from '../../support/site-script.js';

let svc: ModelService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('scaffold tasks against the scripted model and real Chromium', { timeout: 180_000 }, () => {
  it(
    'fixes a broken link after validation, publishes the site with safe headers, keeps its screenshots, and ' +
      'deploy-git pushes exactly its files',
    async () => {
      svc = await startModelService();
      const { h, model } = svc;
      const { fixerCalls } = scriptSiteRun(model);
      const owner = await newAccount(h, { plan: 'free' });
      const { task, logs, byStep } = await runFixTask(h, owner.auth, '', 'done', {
        task_type: 'scaffold',
        prompt: BAKERY_BRIEF,
        repo_url: undefined,
      });
      expect(logs.map((l) => `${l.step}:${l.status}`)).toEqual([
        'planner:done',
        'locator:skipped',
        'inspector:skipped',
        'fixer:done',
        'validator:failed',
        'fixer:done',
        'validator:done',
        'pr:skipped',
      ]);
      expect(byStep('planner')[0]!.output).toMatchObject({
        title: BAKERY_PLAN.title,
        palette: BAKERY_PLAN.palette,
        sections: BAKERY_PLAN.sections,
      });
      const first = byStep('validator')[0]!.output;
      expect(first.passed).toBe(false);
      expect(first.problems).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            check: 'links',
            file: 'index.html',
            message: expect.stringContaining('order.html'),
          }),
        ]),
      );
      expect(first.url).toBeNull();
      // the second fixer run was told what was wrong
      expect(fixerCalls()[1]!.text).toContain('order.html');
      const second = byStep('validator')[1]!.output;
      expect(second).toMatchObject({ passed: true, problems: [] });

      // live at {site_base}/s/<slug>/
      expect(task.deployed_url).toMatch(/^http:\/\/localhost:3000\/s\/[a-z0-9-]*crumb-co-[a-z0-9-]*[0-9a-f]{8}\/$/);
      expect(second.url).toBe(task.deployed_url);
      const path = new URL(task.deployed_url).pathname;
      const index = await h.app.inject({ method: 'GET', url: path });
      expect(index.statusCode).toBe(200);
      expect(index.headers['content-type']).toMatch(/^text\/html/);
      expect(index.headers['content-security-policy']).toMatch(/sandbox allow-scripts/);
      expect(index.headers['content-security-policy']).toMatch(/connect-src 'none'/);
      expect(index.headers['cache-control']).toBe('public, max-age=300');
      expect(index.headers['x-content-type-options']).toBe('nosniff');
      expect(index.body).toContain('<h1>Crumb &amp; Co</h1>');
      const again = await h.app.inject({
        method: 'GET',
        url: path,
        headers: { 'if-none-match': String(index.headers.etag) },
      });
      expect(again.statusCode).toBe(304);
      expect((await h.app.inject({ method: 'GET', url: `${path}styles.css` })).headers['content-type']).toMatch(
        /^text\/css/,
      );
      expect((await h.app.inject({ method: 'GET', url: `${path}loaf.svg` })).headers['content-type']).toMatch(
        /^image\/svg\+xml/,
      );
      expect((await h.app.inject({ method: 'GET', url: `${path}missing.html` })).statusCode).toBe(404);
      expect((await h.app.inject({ method: 'GET', url: `${path}../../v1/me` })).statusCode).not.toBe(200);
      const bare = await h.app.inject({ method: 'GET', url: path.replace(/\/$/, '') });
      expect(bare.statusCode).toBe(301);
      expect(bare.headers.location).toBe(path);
      // site files are public; the task is not
      expect((await h.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}` })).statusCode).toBe(401);

      // screenshots by real Chromium, stored with the site, linked from the step output, for the owner only
      for (const name of ['desktop', 'mobile']) {
        expect(second.screenshots).toHaveProperty(
          [name],
          `${h.deps.config.baseUrl}/v1/tasks/${task.id}/screenshots/${name}.png`,
        );
        const shot = await h.app.inject({
          method: 'GET',
          url: `/v1/tasks/${task.id}/screenshots/${name}.png`,
          headers: owner.auth,
        });
        expect(shot.statusCode).toBe(200);
        expect(shot.headers['content-type']).toBe('image/png');
        expect(shot.rawPayload.subarray(0, 8).equals(PNG)).toBe(true);
        expect(shot.rawPayload.readUInt32BE(16)).toBe(name === 'desktop' ? 1280 : 780);
      }
      const stranger = await newAccount(h, { plan: 'free', scm: false });
      expect(
        (
          await h.app.inject({
            method: 'GET',
            url: `/v1/tasks/${task.id}/screenshots/desktop.png`,
            headers: stranger.auth,
          })
        ).statusCode,
      ).toBe(404);

      // deploy-git pushes exactly the site's files
      const deployed = await h.app.inject({
        method: 'POST',
        url: `/v1/tasks/${task.id}/deploy-git`,
        headers: owner.auth,
        payload: { repo_name: 'crumb-site' },
      });
      expect(deployed.statusCode, deployed.body).toBe(201);
      const files = h.github.files(owner.scm!.login, 'crumb-site', 'main');
      expect(Object.keys(files).sort()).toEqual(['index.html', 'loaf.svg', 'order.html', 'styles.css']);
      expect(files['index.html']).toBe((await h.app.inject({ method: 'GET', url: path })).body);
      expect(model.calls.every((c) => stepOf(c) === 'planner' || stepOf(c) === 'fixer')).toBe(true);
    },
  );

  it('refuses unsafe briefs: at once when the words say so, at the planner when the model judges it', async () => {
    svc = await startModelService();
    const { h, model } = svc;
    const owner = await newAccount(h, { plan: 'free' });
    const phishing = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: {
        task_type: 'scaffold',
        prompt: 'A fake login page that looks like Barclays to steal passwords from customers',
      },
    });
    expect(phishing.statusCode).toBe(400);
    expect(phishing.json().message).toMatch(/^prompt: emend does not build sites for .*phishing/);
    expect(model.calls).toHaveLength(0);

    scriptSiteRun(model, [], { ...BAKERY_PLAN, refusal: 'it sells prescription medicine without a prescription' });
    const { task, byStep } = await runFixTask(h, owner.auth, '', 'failed', {
      task_type: 'scaffold',
      prompt: 'A shop for cheap pills, no questions asked',
      repo_url: undefined,
    });
    expect(task.error).toBe(
      'planner failed: emend does not build this site: it sells prescription medicine without a prescription',
    );
    expect(byStep('fixer')).toHaveLength(0);
    expect(task.deployed_url).toBeNull();
  });

  it('holds the site to the operator’s file limit: a site over it goes back to the fixer with the limit', async () => {
    svc = await startModelService({ EMEND_SITE_MAX_FILES: '4' });
    const { h, model } = svc;
    const { SITE_WITH_BROKEN_LINK, ORDER_PAGE } = await import('../../support/site-script.js');
    const tooMany = `${SITE_WITH_BROKEN_LINK}\n${ORDER_PAGE}\n${editBlock(
      '',
      'Draft notes, not for publishing.',
      'notes.txt',
    )}`;
    const { fixerCalls } = scriptSiteRun(model, [tooMany, 'Removed the notes.\n\nDELETE notes.txt']);
    const owner = await newAccount(h, { plan: 'free' });
    const { task, byStep } = await runFixTask(h, owner.auth, '', 'done', {
      task_type: 'scaffold',
      prompt: BAKERY_BRIEF,
      repo_url: undefined,
    });
    expect(fixerCalls()[1]!.text).toContain('the site has 5 files; the limit is 4');
    expect(byStep('fixer')[0]!.output).toMatchObject({ rounds: 2, malformed_answers: 1 });
    expect((byStep('fixer')[0]!.output.files as { path: string }[]).map((f) => f.path)).toEqual([
      'index.html',
      'loaf.svg',
      'order.html',
      'styles.css',
    ]);
    expect(task.deployed_url).not.toBeNull();
  });

  it('a site that never passes is not published and the task fails saying why', async () => {
    svc = await startModelService();
    const { h, model } = svc;
    // the fixer's correction never comes: the broken link stays
    scriptSiteRun(model, [
      (await import('../../support/site-script.js')).SITE_WITH_BROKEN_LINK,
      'Nothing to change.\n\nDELETE loaf.svg',
    ]);
    const owner = await newAccount(h, { plan: 'free' });
    const { task } = await runFixTask(h, owner.auth, '', 'failed', {
      task_type: 'scaffold',
      prompt: BAKERY_BRIEF,
      repo_url: undefined,
    });
    expect(task.error).toMatch(/did not pass validation/);
    expect(task.deployed_url).toBeNull();
  });
});
