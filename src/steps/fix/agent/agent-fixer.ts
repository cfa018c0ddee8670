import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelMessage } from 'ai';
import { agentLimits } from '../../../billing/billing-plan.js';
import { type Recalled, recall } from '../../../memory/repo-memory.js';
import { clip } from '../../../text/clip.js';
import { type WorkTree, prepareWorkTree } from '../../../environments/work-tree.js';
import { checkoutDiff } from '../../../checkout/diff.js';
import type { FixPayload, FixStep } from '../../step.js';
import { truncateDiff } from '../diff-summary.js';
import { failureSection } from '../fixer.js';
import { repoInstructions } from '../repo-instructions.js';
import { setupOutputToTaskLog } from '../setup-stream.js';
import { environmentScopeFor } from '../env-scope.js';
import { type ValidatorContextOf, validatorContextFromHelpers } from '../validator.js';
import { dropArtifacts } from './artifacts.js';
import { Editor } from './editor.js';
import { agentLoop } from './loop.js';
import { runTestsTool } from './run-tests.js';
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

/** What the opening says of the environment the commands run in. */
function environmentNote(work: WorkTree): string {
  const setup =
    work.setup === 'failed'
      ? `Setting up the repository's dependencies failed (${work.setupProblem ?? 'see the log'}): some commands may not find them.`
      : work.setup === 'skipped'
        ? "The repository's dependencies could not be installed here: some commands may not find them."
        : '';
  const tests = work.testCommand
    ? `The repository's tests run with: \`${work.testCommand}\` (the validator runs the same command). Run the tests that matter to your change, not necessarily all of them.`
    : 'No test command was found for this repository.';
  return [tests, setup].filter(Boolean).join('\n');
}

/** The first round's opening: the request, what the steps before found, the repository's instructions, the environment. */
function firstOpening(payload: FixPayload, dir: string, work: WorkTree, memory: Recalled[]): string {
  const { task, outputs, failure } = payload;
  const located = (outputs.locator?.files ?? []).map((f) => f.path);
  const instructions = repoInstructions(dir, located.slice(0, 15), INSTRUCTIONS_CHARS);
  return agentOpening({
    request: task.prompt,
    plan: outputs.planner,
    locator: outputs.locator,
    insights: outputs.inspector?.insights ?? [],
    memory,
    instructions: instructions.text,
    environment: environmentNote(work),
    // A retry without the round before's conversation (a worker lost it): told the failure and the change so far.
    failure: failureSection(failure, outputs.fixer?.diff),
  });
}

/** Where a round's conversation is kept for the next round: the task's own directory, outside the checkout. */
const conversationFile = (root: string) => join(root, 'agent-conversation.json');

/**
 * The chosen attempt's conversation carried into the task's own directory (docs/agent.md,
 * "Attempts"): a retry after its failed verdict goes on with it, as with a single run's.
 */
export async function carryConversation(fromRoot: string, toRoot: string): Promise<void> {
  // Read and written as the round's own conversation is (the task's directories, outside any checkout's files).
  const text = await readFile(conversationFile(fromRoot), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
    return undefined;
  });
  if (text !== undefined) await writeFile(conversationFile(toRoot), text, { mode: 0o600 });
}

/** The conversation of the round before, when there is one to go on from. */
async function savedConversation(root: string): Promise<ModelMessage[] | undefined> {
  const text = await readFile(conversationFile(root), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? (parsed as ModelMessage[]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The agent fixer (docs/agent.md): the same inputs and the same output as the pipeline fixer,
 * reached by a tool-using loop instead of one answer. The commands run in a work tree set up as
 * the validator sets up its own (src/environments/work-tree.ts), so the tests can run; what they and
 * the editor change is carried back to the checkout. Each turn is a `running` record of the fixer
 * step in the task's log (so its SSE stream shows the trajectory). A retry after a failed verdict
 * goes on with the same conversation, told the validator's failure; a worker lost mid-round
 * starts the round again from the last round's conversation (or afresh).
 */
export function agentFixerStep(contextOf: ValidatorContextOf = validatorContextFromHelpers): FixStep<'fixer'> {
  return async (payload, helpers) => {
    const { task, outputs, failure } = payload;
    const { deps } = helpers;
    const checkout = await helpers.checkout();
    const context = await contextOf(payload, helpers);
    const model = await helpers.model();
    const checkoutDeps = { dataDir: deps.config.dataDir, log: deps.log };
    const settings = context.repoSettings;
    // The setup's output reaches the task's log (and SSE) as it runs, as the validator's does.
    const stream = setupOutputToTaskLog(helpers);
    const work = await prepareWorkTree(
      deps.sandbox,
      checkoutDeps,
      {
        dir: checkout.dir,
        gitDir: checkout.gitDir,
        base: checkout.baseCommit,
        testCommand: context.testCommand,
        ...(settings?.testCommand || settings?.setupCommand
          ? { settings: { testCommand: settings.testCommand, setupCommand: settings.setupCommand } }
          : {}),
      },
      {
        root: checkout.root,
        ...(context.toolchainCache ? { toolchainCache: context.toolchainCache } : {}),
        ...(context.environments !== null
          ? { environments: context.environments ?? environmentScopeFor(payload, helpers) }
          : {}),
        ...(settings ? { env: settings.env, setupSecrets: settings.setupSecrets } : {}),
        signal: helpers.signal,
        log: stream.log,
      },
    ).finally(() => stream.drain());
    try {
      helpers.log('the agent’s environment', {
        test_command: work.testCommand ?? null,
        setup: work.setup,
        ...(work.setupProblem ? { problem: work.setupProblem } : {}),
      });
      // The model client's redaction (every secret the service knows for the task): observations
      // and notes are shown in the task's log too, where the client's own redaction does not reach.
      const redact = (text: string) => model.redact(text);
      const memory = await recall(deps, {
        workspaceId: task.workspaceId,
        repo: task.repoUrl,
        prompt: task.prompt,
        tokenBudget: MEMORY_TOKENS,
      });
      const history = failure ? await savedConversation(checkout.root) : undefined;
      const opening = history
        ? `${failureSection(failure, undefined).trim()}\n\nThe files are as your change left them. Fix what failed, run the tests, and submit again.`
        : firstOpening(payload, checkout.dir, work, memory);
      const editor = new Editor(work.tree.repo, helpers.limits.maxFiles);
      // A retry's change so far counts against the plan's number of files.
      for (const f of filesOfDiff(outputs.fixer?.diff ?? '')) editor.touched.add(f.path);
      const started = deps.clock.now().getTime();
      const place = {
        workdir: work.tree.workdir,
        root: work.sandboxRepo,
        env: work.env,
        pathAssignment: work.pathAssignment,
        toolRoots: work.toolRoots,
      };
      let logged: Promise<unknown> = Promise.resolve();
      const run = await agentLoop({
        model,
        system: AGENT_SYSTEM,
        history,
        opening,
        sandbox: deps.sandbox,
        place,
        editor,
        runTests: runTestsTool({
          sandbox: deps.sandbox,
          work,
          place,
          failure,
          timeoutMs: deps.config.fixer.agentCommandMs,
          signal: helpers.signal,
        }),
        // The plan's turns and wall time, capped by the operator's (EMEND_AGENT_TURNS, EMEND_AGENT_WALL_S).
        limits: { ...agentLimits(helpers.limits, deps.config.fixer), commandMs: deps.config.fixer.agentCommandMs },
        signal: helpers.signal,
        redact,
        // Reported in order, one after the other, and all recorded before the step's own end record.
        onTurn: (record) => {
          logged = logged.then(() => helpers.report({ agent_turn: record }));
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
      // Kept for a retry after a failed verdict, as the requests carried it: the opening (the
      // repository's instructions) redacted as well as every observation.
      await writeFile(conversationFile(checkout.root), JSON.stringify(model.redactMessages(run.messages)), {
        mode: 0o600,
      });
      const back = await work.carryBack(helpers.signal);
      if (back.refused.length)
        helpers.log('files the commands left that are not carried into the change (links, special files)', {
          files: back.refused.slice(0, 20),
        });
      const dropped = await dropArtifacts(checkoutDeps, checkout, editor.created, helpers.signal);
      if (dropped.length)
        helpers.log("the commands' artifacts left out of the change", { files: dropped.slice(0, 20) });
      const diff = await checkoutDiff(checkoutDeps, checkout, { signal: helpers.signal });
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
    } finally {
      await work.dispose();
    }
  };
}
