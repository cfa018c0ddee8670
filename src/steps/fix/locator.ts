import { join } from 'node:path';
import { z } from 'zod';
import { type RankedFile, locate } from '../../locator/index.js';
import type { FileDefinition } from '../../locator/rank.js';
import { matchingDefinitions } from '../../locator/match.js';
import { ModelCallFailed } from '../../llm/client.js';
import type { LocatorOutput } from '../../step-contract/index.js';
import type { FixStep, StepHelpers } from '../step.js';
import { fenced } from '../prompt-parts.js';

/** The files the model re-ranks: its prompt holds each one's outline, so their number stays fixed. */
const SHORTLIST = 15;
const OUTLINE_LINES = 14;
const LEFT_OUT = 'left out by the model';
const BEYOND =
  `ranked beyond the shortlist of ${SHORTLIST}: not re-ranked or selected, ` +
  "only shown with what the fixer's budget leaves";

const RerankSchema = z.object({
  ranking: z
    .array(z.object({ path: z.string(), reason: z.string() }))
    .describe('Shortlisted paths, the most likely to need the change first.'),
});

const SYSTEM = `You are the locator of emend. A deterministic search shortlisted files of a repository for a change request.
Order the shortlist by how likely each file is to need editing for the request: the file holding the code to change first.
Use only paths from the shortlist; leave out files that clearly do not matter. Answer with the JSON object only.`;

/** A file's outline in the re-rank: its definitions that match the request first, then its first ones. */
function outlineFor(defs: FileDefinition[], request: string): FileDefinition[] {
  const best = matchingDefinitions(defs, request, OUTLINE_LINES);
  const chosen = new Set(best);
  for (const d of defs) {
    if (chosen.size >= OUTLINE_LINES) break;
    chosen.add(d);
  }
  // In file order, as the file reads.
  return defs.filter((d) => chosen.has(d));
}

/**
 * The shortlist as the model sees it: path, why it was found, and up to OUTLINE_LINES of its
 * definitions (from the index), those whose names match the request first.
 */
export function shortlistText(
  files: RankedFile[],
  definitions: Record<string, FileDefinition[]>,
  request: string,
): string {
  return files
    .map((f) => {
      const defs = definitions[f.path] ?? [];
      const outline = outlineFor(defs, request)
        .map(
          ([name, kind, start, end, container]) =>
            `${String(start).padStart(5)}-${end} ${kind} ${container ? `${container}.` : ''}${name}`,
        )
        .join('\n');
      const more = defs.length > OUTLINE_LINES ? ` (${OUTLINE_LINES} of ${defs.length} definitions)` : '';
      return `## ${f.path}\nfound by: ${f.reasons.join('; ')}${outline ? `\n${fenced(outline)}${more}` : ''}`;
    })
    .join('\n\n');
}

/**
 * The model's order over the shortlist: the files it named, in its order, then the ones it left out,
 * marked so and in the deterministic ranking's order (fixerFiles reads them so); `kept` counts the
 * named ones (the selection comes from them). Undefined when it named none of the shortlist:
 * leaving out everything is not an answer.
 */
export function applyRanking(
  files: RankedFile[],
  ranking: { path: string; reason: string }[],
): { files: RankedFile[]; kept: number } | undefined {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const seen = new Set<string>();
  const ordered: RankedFile[] = [];
  for (const r of ranking) {
    const f = byPath.get(r.path);
    if (!f || seen.has(r.path)) continue;
    seen.add(r.path);
    ordered.push({ ...f, reasons: [...f.reasons, `model: ${r.reason.slice(0, 200)}`] });
  }
  if (ordered.length === 0) return undefined;
  const left = files.filter((f) => !seen.has(f.path)).map((f) => ({ ...f, reasons: [...f.reasons, LEFT_OUT] }));
  return { files: [...ordered, ...left], kept: ordered.length };
}

/**
 * How many files of the deterministic ranking the locator hands on: the shortlist, or the plan's
 * `maxFiles` when that is more, so the fixer's fill can reach every file the plan lets it show.
 */
export const locatedCount = (maxFiles: number) => Math.max(SHORTLIST, maxFiles);

/**
 * How the locator step asks `locate()`: locatedCount files, those beyond the shortlist the modules
 * the best-ranked files import taking turns with the rest of the ranking (rank's `importsAfter`).
 */
export const locateOptions = (maxFiles: number) => ({ top: locatedCount(maxFiles), importsAfter: SHORTLIST });

/** The files the model re-ranks: the deterministic ranking's first SHORTLIST. */
export const shortlistOf = (ranked: RankedFile[]) => ranked.slice(0, SHORTLIST);

/**
 * The locator step's `files` and `selected` from the deterministic ranking (`ranked`, up to
 * locatedCount files) and the model's order over its shortlist (applyRanking; undefined without a
 * re-rank). `files`: the shortlist in the model's order, the files it left out after them, then the
 * files beyond the shortlist in the deterministic order, marked so. `selected`: the kept files (the
 * whole shortlist without a re-rank), at most `maxFiles`; a file beyond the shortlist is never
 * selected, as no model looked at it.
 */
export function handOff(
  ranked: RankedFile[],
  reranked: { files: RankedFile[]; kept: number } | undefined,
  maxFiles: number,
): { files: RankedFile[]; selected: string[] } {
  const shortlist = reranked?.files ?? shortlistOf(ranked);
  const kept = reranked?.kept ?? shortlist.length;
  const beyond = ranked.slice(SHORTLIST).map((f) => ({ ...f, reasons: [...f.reasons, BEYOND] }));
  return {
    files: [...shortlist, ...beyond],
    selected: shortlist.slice(0, Math.min(kept, maxFiles)).map((f) => f.path),
  };
}

/** The locator's files as the fixer takes them (fixerFiles). */
export interface FixerFiles {
  /**
   * The files the fixer lays out first: the locator's selection, at most `maxFiles`, then `also`
   * (a retry's failing-test files).
   */
  selected: string[];
  /**
   * The shortlisted files `selected` leaves out, in the deterministic ranking's order, as many as
   * `maxFiles` still allows: the fixer shows them with what its budget leaves once `selected` is laid out.
   */
  fill: string[];
  /**
   * Then the files ranked beyond the shortlist, in that order, as many as `maxFiles` still allows:
   * shown with what `fill` leaves, so a plan of more files never shows less of the shortlist.
   */
  beyond: string[];
}

/**
 * The hand-off from the locator to the fixer, and the one place the fill is capped. The output's
 * `files` are the model's kept files in its order, then the files it left out, then those beyond
 * the shortlist, both in the deterministic order (handOff), or, without a re-rank, the
 * deterministic order alone; `selected` is their first ones. So the files after `selected` are in
 * the deterministic order whenever there is room for any: a re-rank keeping more than `maxFiles`
 * fills the selection itself. `also` joins the selection and counts against `maxFiles` like it.
 */
export function fixerFiles(
  locator: Pick<LocatorOutput, 'files' | 'selected'> | undefined,
  maxFiles: number,
  also: readonly string[] = [],
): FixerFiles {
  const selected = [...new Set([...(locator?.selected ?? []).slice(0, maxFiles), ...also])];
  const chosen = new Set(selected);
  const after = (files: { path: string }[]) => files.map((f) => f.path).filter((p) => !chosen.has(p));
  const room = Math.max(0, maxFiles - selected.length);
  // handOff puts the shortlist first: the files from SHORTLIST on are those beyond it.
  const fill = after(locator?.files.slice(0, SHORTLIST) ?? []).slice(0, room);
  const beyond = after(locator?.files.slice(SHORTLIST) ?? []).slice(0, room - fill.length);
  return { selected, fill, beyond };
}

/** The model's order over the shortlist (applyRanking), or undefined when the re-rank failed. */
async function rerank(
  helpers: StepHelpers,
  request: string,
  files: RankedFile[],
  definitions: Record<string, FileDefinition[]>,
): Promise<{ files: RankedFile[]; kept: number } | undefined> {
  const model = await helpers.model();
  try {
    const { ranking } = await model.object({
      system: SYSTEM,
      messages: [
        {
          role: 'user',
          content: `Request:\n${fenced(request)}\n\nShortlist:\n\n${shortlistText(files, definitions, request)}`,
        },
      ],
      schema: RerankSchema,
      name: 'ranking',
      maxOutputTokens: 1_500,
    });
    return applyRanking(files, ranking);
  } catch (err) {
    // The deterministic order is a fine answer: a re-rank that fails for good is noted, not fatal.
    if (err instanceof ModelCallFailed) {
      helpers.log('re-rank failed; keeping the deterministic order', { problem: err.message });
      return undefined;
    }
    throw err;
  }
}

/**
 * The locator: deterministic retrieval over the checkout (cached per commit), hinted by the
 * plan's likely files, then optionally re-ranked by the model over its shortlist. The next steps
 * get the first `maxFiles` of the plan's limits; the fixer's fill may reach the files after them,
 * beyond the shortlist too, up to `maxFiles` in all (handOff, fixerFiles).
 */
export function locatorStep(): FixStep<'locator'> {
  return async ({ task, outputs }, helpers) => {
    const checkout = await helpers.checkout();
    const plan = outputs.planner;
    const hints = plan?.likely_files?.length
      ? `\n\nFiles the plan expects to change: ${plan.likely_files.join(', ')}`
      : '';
    const request = `${task.prompt}${hints}`;
    const { maxFiles } = helpers.limits;
    const located = await locate(checkout.dir, request, {
      ...locateOptions(maxFiles),
      cacheDir: join(helpers.deps.config.dataDir, 'locator-cache'),
    });
    const shortlist = shortlistOf(located.files);
    let better: { files: RankedFile[]; kept: number } | undefined;
    if (helpers.deps.config.llm.rerank && shortlist.length > 1)
      better = await rerank(
        helpers,
        `${task.prompt}${plan?.summary ? `\n\nPlan: ${plan.summary}` : ''}`,
        shortlist,
        located.definitions,
      );
    // Files the model left out, and those beyond the shortlist, stay in `files`, marked and in the
    // deterministic order, but are not selected: the fixer shows them with what its budget leaves (fixerFiles).
    const { files, selected } = handOff(located.files, better, maxFiles);
    helpers.log('files located', { candidates: files.length, selected: selected.length, cache: located.timings.cache });
    return {
      output: {
        files: files.map((f) => ({ path: f.path, score: Math.round(f.score * 1000) / 1000, reasons: f.reasons })),
        selected,
        reranked: better !== undefined,
        index: { cache: located.timings.cache, files: located.timings.files, ms: located.timings.total_ms },
      },
    };
  };
}
