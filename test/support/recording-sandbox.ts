import { basename } from 'node:path';
import type { Sandbox } from '../../src/sandbox/types.js';

/** One command the sandbox ran: the tree it ran in (`baseline`, `change`), its command line, and when. */
export interface RecordedRun {
  tree: string;
  command: string;
  start: number;
  end: number;
}

/**
 * The real sandbox, with a record of what it ran: every command goes to `sandbox` unchanged, and
 * is listed with the tree whose directory it ran in and its start and end. The validator's trees
 * are `<root>/baseline` and `<root>/change`, so a test sees which tree ran what, and whether two
 * runs overlapped.
 */
export function recordingSandbox(sandbox: Sandbox): { sandbox: Sandbox; runs: RecordedRun[] } {
  const runs: RecordedRun[] = [];
  return {
    runs,
    sandbox: {
      report: () => sandbox.report(),
      run: async (request) => {
        const start = performance.now();
        try {
          return await sandbox.run(request);
        } finally {
          runs.push({
            tree: basename(request.workdir),
            command: request.command.join(' '),
            start,
            end: performance.now(),
          });
        }
      },
    },
  };
}

/** The runs of the test command (as the validator ran it: `out.command`) in a tree. */
export const testRunsIn = (runs: RecordedRun[], tree: string, command: string | null) =>
  runs.filter((r) => r.tree === tree && command !== null && r.command.includes(command));
