import type { SiteStep } from '../step.js';
import { readSiteFiles } from '../../sites/store.js';
import { SITE_LIMITS } from '../../sites/check-static.js';
import { validateSite } from '../../sites/validate-site.js';
import { ensureSlug, publishSite, saveScreenshots } from '../../sites/publish.js';

/** The brief asks for outside assets (fonts, a CDN, embeds): then external URLs are no problem. */
export const briefAllowsExternal = (brief: string) =>
  /\b(google fonts|web ?fonts?|cdn|embed(ded)?|youtube|vimeo|unsplash|external (scripts?|images?|assets?|fonts?))\b/i.test(
    brief,
  );

/**
 * The scaffold validator: the site's files checked as HTML, links, accessibility, and in
 * headless Chromium (script errors, contrast, mobile layout, screenshots at desktop and mobile
 * widths, stored with the task). A site that passes goes live at {site_base}/s/<slug>/.
 */
export function siteValidatorStep(): SiteStep<'validator'> {
  return async ({ task }, helpers) => {
    const { deps } = helpers;
    const files = await readSiteFiles(deps, task.id);
    if (files.length === 0) throw new Error('the site has no files to validate');
    const result = await validateSite(Object.fromEntries(files.map((f) => [f.path, f.content])), {
      chromiumPath: deps.config.site.chromiumPath,
      allowExternal: briefAllowsExternal(task.prompt),
      // The site is served under /s/<slug>/: a root-relative URL would leave it.
      allowRootRelative: false,
      limits: { ...SITE_LIMITS, maxFiles: deps.config.site.maxFiles, maxTotalBytes: deps.config.site.maxBytes },
      signal: helpers.signal,
    });
    const slug = await ensureSlug(deps, task);
    const screenshots: Record<string, string> = {};
    if (result.screenshots) {
      await saveScreenshots(deps, task.id, { desktop: result.screenshots.desktop, mobile: result.screenshots.mobile });
      for (const name of ['desktop', 'mobile'])
        screenshots[name] = `${deps.config.baseUrl}/v1/tasks/${task.id}/screenshots/${name}.png`;
    }
    const url = result.passed ? await publishSite(deps, task.id, slug) : null;
    helpers.log('site validated', { passed: result.passed, problems: result.problems.length });
    return {
      output: {
        passed: result.passed,
        problems: result.problems,
        screenshots,
        url,
        files: result.stats.files,
        bytes: result.stats.bytes,
      },
      patch: { passed: result.passed },
    };
  };
}
