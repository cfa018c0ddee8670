import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/**
 * One SWE-bench instance, as the public data sets write them. FAIL_TO_PASS and PASS_TO_PASS
 * are arrays in some copies and JSON-encoded strings in others (the Hugging Face export);
 * both read as arrays.
 */
const testIds = z.union([
  z.array(z.string()),
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is a string but not a JSON-encoded array' });
        return z.NEVER;
      }
    })
    .pipe(z.array(z.string())),
]);

export const instanceSchema = z.object({
  instance_id: z.string().min(1),
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'is not "owner/name"'),
  base_commit: z.string().regex(/^[0-9a-f]{7,40}$/, 'is not a commit hash'),
  problem_statement: z.string(),
  // Only the oracle mode needs the gold patch; a data set without it can still be judged.
  patch: z.string().default(''),
  test_patch: z.string(),
  FAIL_TO_PASS: testIds,
  PASS_TO_PASS: testIds,
});

export type Instance = z.infer<typeof instanceSchema>;

export class DatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatasetError';
  }
}

/** The instances of a JSONL text; a bad line throws a DatasetError naming the line and the field. */
export function parseDataset(text: string, source = 'the dataset'): Instance[] {
  const instances: Instance[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    const where = `${source}, line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new DatasetError(`${where}: not JSON (${(err as Error).message})`);
    }
    const parsed = instanceSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.join('.') || '(the line)';
      throw new DatasetError(`${where}: field ${field} ${issue.message}`);
    }
    if (seen.has(parsed.data.instance_id))
      throw new DatasetError(`${where}: instance_id ${parsed.data.instance_id} appears twice`);
    seen.add(parsed.data.instance_id);
    instances.push(parsed.data);
  });
  return instances;
}

export async function readDataset(path: string): Promise<Instance[]> {
  return parseDataset(await readFile(path, 'utf8'), path);
}
