import { join } from 'node:path';
import { z } from 'zod';
import { type RankedFile, locate } from '../../locator/index.js';
import type { FileDefinition } from '../../locator/rank.js';
import { matchingDefinitions } from '../../locator/match.js';
import { ModelCallFailed } from '../../llm/client.js';
import type { LocatorOutput } from '../../step-contract/index.js';
import type { FixStep, StepHelpers } from '../step.js';
import { fenced } from '../prompt-parts.js';

const SHORTLIST = 15;
const OUTLINE_LINES = 14;
const LEFT_OUT = 'left out by the model';

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

/** The locator's files as the fixer takes them (fixerFiles). */
export interface FixerFiles {
  /** The files the next steps read: the re-rank's kept files, else the ranking's first, at most `maxFiles`. */
  selected: string[];
  /**
   * The shortlisted files `selected` leaves out, in the deterministic ranking's order, as many as
   * `maxFiles` still allows: the fixer shows them with what its budget leaves once `selected` is laid out.
   */
  fill: string[];
}

/**
 * The hand-off from the locator to the fixer. The output's `files` are the model's kept files in
 * its order, then the files it left out in the deterministic order (applyRanking), or, without a
 * re-rank, the deterministic order alone; `selected` is their first ones. So the files after
 * `selected` are in the deterministic order whenever there is room for any: a re-rank keeping
 * more than `maxFiles` fills the selection itself.
 */
export function fixerFiles(
  locator: Pick<LocatorOutput, 'files' | 'selected'> | undefined,
  maxFiles: number,
): FixerFiles {
  const selected = (locator?.selected ?? []).slice(0, maxFiles);
  const chosen = new Set(selected);
  const fill = (locator?.files ?? [])
    .map((f) => f.path)
    .filter((p) => !chosen.has(p))
    .slice(0, Math.max(0, maxFiles - selected.length));
  return { selected, fill };
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
 * plan's likely files, then optionally re-ranked by the model. The fixer gets the first
 * `maxFiles` of the plan's limits.
 */
export function locatorStep(): FixStep<'locator'> {
  return async ({ task, outputs }, helpers) => {
    const ws = await helpers.workspace();
    const plan = outputs.planner;
    const hints = plan?.likely_files?.length
      ? `\n\nFiles the plan expects to change: ${plan.likely_files.join(', ')}`
      : '';
    const request = `${task.prompt}${hints}`;
    const located = await locate(ws.dir, request, {
      top: SHORTLIST,
      cacheDir: join(helpers.deps.config.dataDir, 'locator-cache'),
    });
    let files = located.files;
    let kept = files.length;
    let reranked = false;
    if (helpers.deps.config.llm.rerank && files.length > 1) {
      const better = await rerank(
        helpers,
        `${task.prompt}${plan?.summary ? `\n\nPlan: ${plan.summary}` : ''}`,
        files,
        located.definitions,
      );
      if (better) {
        ({ files, kept } = better);
        reranked = true;
      }
    }
    // Files the model left out stay in `files`, marked and in the deterministic order, but are not
    // selected: the fixer shows them with what its budget leaves (fixerFiles).
    const selected = files.slice(0, Math.min(kept, helpers.limits.maxFiles)).map((f) => f.path);
    helpers.log('files located', { candidates: files.length, selected: selected.length, cache: located.timings.cache });
    return {
      output: {
        files: files.map((f) => ({ path: f.path, score: Math.round(f.score * 1000) / 1000, reasons: f.reasons })),
        selected,
        reranked,
        index: { cache: located.timings.cache, files: located.timings.files, ms: located.timings.total_ms },
      },
    };
  };
}
