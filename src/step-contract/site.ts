import { z } from 'zod';
import { modelUsage } from './usage.js';

/** The site planner's answer, as the model is asked for it. */
export const SitePlanSchema = z.object({
  refusal: z
    .string()
    .describe(
      'Empty, or why this brief asks for something unsafe or illegal (phishing, impersonation, illegal goods, malware, hate, sexual content involving minors); then nothing else matters.',
    ),
  title: z.string().describe('The site’s name as shown in the page title and header.'),
  tagline: z.string(),
  audience: z.string().describe('Who the site speaks to, and what they should do after reading it.'),
  sections: z
    .array(
      z.object({
        id: z.string().describe('lower-case anchor id'),
        heading: z.string(),
        purpose: z.string(),
        copy: z.string().describe('The section’s actual text, ready to publish.'),
      }),
    )
    .describe('In page order: usually a hero, 3-6 content sections, a call to action, a footer.'),
  palette: z.object({
    background: z.string().describe('hex colour'),
    surface: z.string().describe('hex colour for cards and panels'),
    text: z.string().describe('hex colour with at least 7:1 contrast on background'),
    accent: z.string().describe('hex colour for buttons and links'),
    accent_text: z.string().describe('hex colour of text on accent, at least 4.5:1'),
  }),
  typography: z.object({
    headings: z.string().describe('a system font stack'),
    body: z.string().describe('a system font stack'),
  }),
});
export type SitePlan = z.infer<typeof SitePlanSchema>;

/** The site planner's output: the plan as the model wrote it (a refusal fails the step instead), and its model. */
export const SitePlannerOutput = SitePlanSchema.omit({ refusal: true }).extend({ model: z.string(), ...modelUsage });
export type SitePlannerOutput = z.infer<typeof SitePlannerOutput>;

export const SiteFixerOutput = z.object({
  files: z.array(z.object({ path: z.string(), size: z.number().int() })),
  bytes: z.number().int(),
  rounds: z.number().int(),
  notes: z.string(),
  model: z.string(),
  ...modelUsage,
});
export type SiteFixerOutput = z.infer<typeof SiteFixerOutput>;

export const SiteProblem = z.object({
  check: z.enum(['html', 'links', 'external', 'tracking', 'accessibility', 'contrast', 'script', 'layout', 'size']),
  /** The site file the problem is in, when there is one. */
  file: z.string().optional(),
  message: z.string(),
});

export const SiteValidatorOutput = z.object({
  passed: z.boolean(),
  problems: z.array(SiteProblem),
  /** Screenshot URLs by name (desktop, mobile), when the browser took them. */
  screenshots: z.record(z.string(), z.string()),
  /** Where the site went live, or null when it did not pass. */
  url: z.string().nullable(),
  files: z.number().int(),
  bytes: z.number().int(),
});
export type SiteValidatorOutput = z.infer<typeof SiteValidatorOutput>;
