import { type ToolSet, tool } from 'ai';
import { z } from 'zod';

/**
 * The tools the agent fixer offers the model (schemas only: the loop runs them). `bash` runs in the
 * sandbox with no network; `editor` changes files through emend's edit engine; `submit` ends the
 * loop with the change as it stands.
 */

/** The editor's arguments; which ones a command needs is the editor's to check (src/steps/fix/agent/editor.ts). */
export const EDITOR_INPUT = z.object({
  command: z.enum(['view', 'replace', 'insert', 'create']),
  path: z.string().min(1).max(500),
  start_line: z.number().int().min(1).optional(),
  end_line: z.number().int().min(1).optional(),
  old_text: z.string().optional(),
  new_text: z.string().optional(),
  after_line: z.number().int().min(0).optional(),
  text: z.string().optional(),
});

export const AGENT_TOOLS = {
  bash: tool({
    description:
      'Run one bash command in the repository (no network). The working directory persists between calls. ' +
      'Output is cut to its head and tail when long. Use it to explore (ls, grep, cat), reproduce the bug, and run tests.',
    inputSchema: z.object({ command: z.string().min(1).max(10_000).describe('the command line, run with bash -c') }),
  }),
  editor: tool({
    description:
      'View or change a file, paths relative to the repository root: view (with line numbers; a range with ' +
      'start_line/end_line), replace (old_text must occur once; give enough context), insert (text after ' +
      'after_line; 0 for the top), create (a new file).',
    inputSchema: EDITOR_INPUT,
  }),
  run_tests: tool({
    description:
      "Run the repository's tests (no network) and get a short summary: by default the focused pass, only the " +
      'test files your change touches, the tests that failed last time and the test files that import the modules ' +
      'you changed; all: true runs the whole suite, as the validator will.',
    inputSchema: z.object({ all: z.boolean().optional().describe('run the whole suite instead of the focused pass') }),
  }),
  submit: tool({
    description:
      'Finish: the change as it now stands in the repository is your answer. Say in one or two sentences what you changed and why.',
    inputSchema: z.object({ summary: z.string().max(4_000) }),
  }),
} satisfies ToolSet;

export type AgentToolName = keyof typeof AGENT_TOOLS;
