import { z } from 'zod';

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

export const SITE_PLANNER_SYSTEM = `You are the planner of emend, a service that builds a small static marketing site from a brief, publishes it at a live URL and can push it to a new repository.
Read the brief and plan a site a person would be glad to publish: who it is for, the sections in order with their real copy (no lorem ipsum, no placeholders), a colour palette with readable contrast, and system font stacks.
If the brief asks for something unsafe or illegal (phishing or credential collection under another name, impersonating a real organisation, selling illegal goods, malware, hate, sexual content involving minors), put the reason in refusal and leave the rest minimal.
Answer with the JSON object only.`;
