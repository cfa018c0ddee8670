import { recall } from '../../../memory/repo-memory.js';
import { clip } from '../../../text/clip.js';
import { appendLog } from '../../../tasks/task-logs.js';
import { workspaceDiff } from '../../../workspace/diff.js';
import type { FixStep } from '../../step.js';
import { truncateDiff } from '../diff-summary.js';
import { failureSection } from '../fixer.js';
import { repoInstructions } from '../repo-instructions.js';
import { dropArtifacts } from './artifacts.js';
import { Editor } from './editor.js';
import { knownSecrets, redactWith } from './known-secrets.js';
import { agentLoop } from './loop.js';
import { AGENT_SYSTEM, agentOpening } from './prompt.js';

const MEMORY_TOKENS = 3_000;
/** Characters the repository's instructions may take in the opening message. */
const INSTRUCTIONS_CHARS = 6_000;

type FileChange = { path: string; kind: 'modified' | 'created' | 'deleted' };

/** The files a git diff changes and how: the agent may change them with the editor or with commands. */
export function filesOfDiff(diff: string): FileChange[] {
  const files: FileChange[] = [];
  for (const section of diff.split(/^(?=diff --git )/m)) {
    const m = /^diff --git a\/(\S+) b\/(\S+)$/m.exec(section);
    if (!m) continue;
    const kind = /^new file mode/m.test(section)
      ? 'created'
      : /^deleted file mode/m.test(section)
        ? 'deleted'
        : 'modified';
    files.push({ path: m[2]!, kind });
  }
  return files;
}

/**
 * The agent fixer (docs/agent.md): the same inputs and the same output as the pipeline fixer,
 * reached by a tool-using loop in the checkout instead of one answer. Each turn is a `running`
 * record of the fixer step in the task's log (so its SSE stream shows the trajectory). A retry
 * after a failed verdict starts a new conversation that opens with the validator's failure and the
 * change so far, already in the checkout.
 */
export function agentFixerStep(): FixStep<'fixer'> {
  return async ({ task, outputs, failure }, helpers) => {
    const { deps } = helpers;
    const ws = await helpers.workspace();
    const model = await helpers.model();
    const memory = await recall(deps, {
      accountId: task.accountId,
      repo: task.repoUrl,
      prompt: task.prompt,
      tokenBudget: MEMORY_TOKENS,
    });
    const located = (outputs.locator?.files ?? []).map((f) => f.path);
    const instructions = repoInstructions(ws.dir, located.slice(0, 15), INSTRUCTIONS_CHARS);
    const opening = agentOpening({
      request: task.prompt,
      plan: outputs.planner,
      locator: outputs.locator,
      insights: outputs.inspector?.insights ?? [],
      memory,
      instructions: instructions.text,
      failure: failureSection(failure, outputs.fixer?.diff),
    });
    const redact = redactWith(await knownSecrets(deps, task));
    const editor = new Editor(ws.dir, helpers.limits.maxFiles);
    const started = deps.clock.now().getTime();
    let logged: Promise<unknown> = Promise.resolve();
    const run = await agentLoop({
      model,
      system: AGENT_SYSTEM,
      opening,
      sandbox: deps.sandbox,
      dir: ws.dir,
      editor,
      limits: {
        turns: deps.config.fixer.agentTurns,
        wallMs: deps.config.fixer.agentWallMs,
        commandMs: deps.config.fixer.agentCommandMs,
      },
      signal: helpers.signal,
      redact,
      // In order, one after the other, and all written before the step's own end record.
      onTurn: (record) => {
        logged = logged.then(() =>
          appendLog(deps, task.id, { step: 'fixer', status: 'running', output: { agent_turn: record } }),
        );
        return logged.then(() => {});
      },
      spent: () => model.spent(),
      now: () => deps.clock.now().getTime(),
    });
    await logged;
    helpers.log('agent loop ended', {
      turns: run.turns,
      submitted: run.submitted,
      ms: deps.clock.now().getTime() - started,
    });
    const wsDeps = { dataDir: deps.config.dataDir, log: deps.log };
    const dropped = await dropArtifacts(wsDeps, ws, editor.created, helpers.signal);
    if (dropped.length) helpers.log("the commands' artifacts left out of the change", { files: dropped.slice(0, 20) });
    const diff = await workspaceDiff(wsDeps, ws, { signal: helpers.signal });
    if (!diff.trim())
      throw new Error(
        run.submitted
          ? `the agent submitted after ${run.turns} turns without changing any file`
          : `the agent changed no file: ${run.stopped}`,
      );
    const changed = filesOfDiff(diff);
    return {
      output: {
        diff,
        files_changed: changed,
        edits_applied: editor.edits,
        edits_failed: [],
        rounds: run.turns,
        notes: clip(redact(run.submitted ? run.summary : `stopped: ${run.stopped}`), 2_000),
        memory_used: memory.map((m) => m.id),
        model: `${model.provider}/${model.modelId}`,
      },
      patch: { changed: true, diffSummary: truncateDiff(diff) },
    };
  };
}
