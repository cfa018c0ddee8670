import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EDIT_FORMAT_INSTRUCTIONS } from '../../edits/index.js';
import type { SiteStep } from '../step.js';
import { editRounds } from '../fix/edit-rounds.js';
import { fenced } from '../prompt-parts.js';
import { clip } from '../../text/clip.js';
import { readSiteDir, writeSiteDir } from '../../sites/site-dir.js';
import { readSiteFiles, saveSiteFiles } from '../../sites/store.js';
import { taskWorkDirOf } from '../../checkout/layout.js';

const MAX_ROUNDS = 3;

const SYSTEM = `You are the fixer of emend, writing a small static marketing site from a plan: index.html, a stylesheet, small scripts if they help, images as inline SVG or SVG files.
- Use the plan's copy, palette and typography; make it responsive (a viewport meta, fluid layout that fits a 390 px wide phone) and accessible (lang on html, alt on images, labels on form controls, readable contrast, one h1).
- Every link and asset must point inside the site (or be a #fragment of an existing id, mailto: or tel:). No external fonts, scripts, images or stylesheets unless the brief asks for them, and never analytics or tracking.
- No build step: plain HTML, CSS and JavaScript that run as they are.

${EDIT_FORMAT_INSTRUCTIONS}`;

/** The site as the model sees it: every text file whole. */
function filesSection(files: { path: string; content: Buffer }[]): string {
  if (files.length === 0) return 'The site has no files yet: create them.';
  return `Current files:\n\n${files.map((f) => `## ${f.path}\n${fenced(clip(f.content.toString('utf8'), 40_000))}`).join('\n\n')}`;
}

/** Over the operator's limits: a problem the model can fix, in words. */
function limitProblems(files: { content: Buffer }[], limits: { maxBytes: number; maxFiles: number }): string[] {
  const bytes = files.reduce((n, f) => n + f.content.length, 0);
  const out: string[] = [];
  if (files.length > limits.maxFiles) out.push(`the site has ${files.length} files; the limit is ${limits.maxFiles}`);
  if (bytes > limits.maxBytes) out.push(`the site is ${bytes} bytes; the limit is ${limits.maxBytes}`);
  return out;
}

/**
 * The scaffold fixer: writes (or, after a failed validation, corrects) the site's files with
 * the edit format, in a scratch directory, and stores them with the task so any worker and
 * every API node can read them.
 */
export function siteFixerStep(): SiteStep<'fixer'> {
  return async ({ task, outputs, failure }, helpers) => {
    const { deps } = helpers;
    const dir = join(taskWorkDirOf(deps.config.dataDir, task.id), 'site');
    const current = (await readSiteFiles(deps, task.id)).map((f) => ({ path: f.path, content: f.content }));
    await writeSiteDir(dir, current);
    try {
      // The plan as the model should follow it: what the planner's model was is no concern of the fixer's.
      const { model: _planModel, ...plan } = outputs.planner ?? {};
      const problems = failure?.problems;
      const user = [
        `Brief:\n${fenced(task.prompt)}`,
        `Site plan:\n${fenced(JSON.stringify(plan, null, 2), 'json')}`,
        problems?.length
          ? `The site did not pass validation. Fix these problems:\n${problems.map((p) => `- [${p.check}]${p.file ? ` ${p.file}:` : ''} ${p.message}`).join('\n')}`
          : '',
        filesSection(current),
      ]
        .filter(Boolean)
        .join('\n\n');
      const model = await helpers.model();
      const { maxBytes, maxFiles } = deps.config.site;
      const {
        rounds,
        notes,
        problems: left,
      } = await editRounds(model, {
        system: SYSTEM,
        user,
        dir,
        maxRounds: MAX_ROUNDS,
        maxOutputTokens: 16_000,
        log: helpers.log,
        check: async () => limitProblems(await readSiteDir(dir), { maxBytes, maxFiles }),
      });
      if (left.length)
        throw new Error(`the site could not be written after ${rounds} answers: ${clip(left.join('; '), 600)}`);
      const files = await readSiteDir(dir);
      if (!files.some((f) => f.path === 'index.html')) throw new Error('the site has no index.html');
      await saveSiteFiles(deps, task.id, files);
      return {
        output: {
          files: files.map((f) => ({ path: f.path, size: f.content.length })),
          bytes: files.reduce((n, f) => n + f.content.length, 0),
          rounds,
          notes: clip(notes, 2_000),
          model: `${model.provider}/${model.modelId}`,
        },
        patch: { changed: true },
      };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}
