import { applyEdits, parseEdits } from '../edits/index.js';
import { editsFromUnifiedDiff, formatEdits } from '../edits/from-diff.js';
import { ConfinedDir } from '../checkout/confined-fs.js';

/** How the gold patch went through the fixer's edit path. */
export interface EditOutcome {
  applied: number;
  /** Blocks the applier refused, and conversion or parse errors, one sentence each. */
  failures: string[];
}

/**
 * The gold patch through the fixer's real edit path: converted to an answer in the edit format,
 * parsed as a model's answer is, applied by the applier to the checkout.
 */
export async function applyGoldPatch(checkout: string, patch: string): Promise<EditOutcome> {
  // The dataset schema lets `patch` be absent (the judge needs none); the oracle does.
  if (!patch.trim()) return { applied: 0, failures: ['the instance has no gold patch'] };
  const dir = new ConfinedDir(checkout, { exclude: ['.git'] });
  const converted = editsFromUnifiedDiff(patch, (path) => dir.readText(path));
  const parsed = parseEdits(formatEdits(converted.edits));
  const report = await applyEdits(checkout, parsed.edits);
  return {
    applied: report.applied.length,
    failures: [
      ...converted.errors.map((e) => `convert: ${e}`),
      ...parsed.errors.map((e) => `parse: ${e}`),
      ...report.failed.map((f) => `apply ${f.path}: ${f.reason.split('\n')[0]}`),
    ],
  };
}
