import type { ModelMessage } from 'ai';
import type { ModelClient, ToolCallMade } from '../../../llm/client.js';
import { charsForTokens } from '../../../llm/usage.js';
import type { Sandbox } from '../../../sandbox/types.js';
import { clip } from '../../../text/clip.js';
import type { Editor } from './editor.js';
import { type CommandPlace, type ShellState, headAndTail, runCommand } from './shell.js';
import { AGENT_TOOLS, EDITOR_INPUT } from './tools.js';

/**
 * The agent fixer's loop: the model calls tools (bash in the sandbox, the editor, submit) turn by
 * turn until it submits or a limit ends it. Every turn is reported (`onTurn`: the task's log and
 * its SSE stream). Observations are redacted of every secret the service knows before the model
 * sees them; old observations are elided when the conversation outgrows its share of the window,
 * never the opening request.
 */

export interface AgentLimits {
  /** Model turns at most. */
  turns: number;
  /** Wall time of the whole loop. */
  wallMs: number;
  /** One command's time in the sandbox. */
  commandMs: number;
}

/** One turn, as the task's log records it. */
export interface TurnRecord {
  turn: number;
  tool: string;
  /** The command, or the editor's command and path. */
  action: string;
  exit_code?: number | null;
  ok?: boolean;
  observation: string;
  tokens: number;
  cost_usd: number;
}

export interface AgentRun {
  submitted: boolean;
  /** The model's summary at submit, or why the loop stopped without one. */
  summary: string;
  turns: number;
  /** Why the loop ended without a submit (the turn limit, the wall time). */
  stopped?: string;
  /** The conversation as it ended: a retry after a failed verdict goes on from it. */
  messages: ModelMessage[];
}

interface LoopOptions {
  model: ModelClient;
  system: string;
  /** The conversation so far (a retry's), or none; `opening` is the next user message either way. */
  history?: ModelMessage[];
  opening: string;
  sandbox: Sandbox;
  place: CommandPlace;
  editor: Editor;
  /** The `run_tests` tool (./run-tests.ts); undefined when the repository has no test command. */
  runTests?: (all: boolean) => Promise<{ action: string; exitCode: number | null; observation: string }>;
  limits: AgentLimits;
  signal: AbortSignal;
  /** Removes every known secret from text shown to the model or logged. */
  redact(text: string): string;
  onTurn(record: TurnRecord): Promise<void>;
  /** Tokens and USD spent so far by this step (its meter), for the turn records. */
  spent(): { tokens: number; costUsd: number };
  now(): number;
}

/** How much of a large window the conversation may take before old observations are elided. */
const HISTORY_SHARE = 0.6;
/** The longest answer a turn asks for (less on a small window). */
const OUTPUT_TOKENS = 4_000;
/** Room kept for what the estimate of a prompt does not see (the tools' definitions). */
const FIT_MARGIN_CHARS = 2_000;
/** An observation kept in the log record, at most: its head and its tail, as the model sees it. */
const RECORD_CHARS = { head: 800, tail: 1_200 };
const ELIDED = '[observation elided to keep the conversation within the model’s window]';

const FALLBACK_COMMAND = /```(?:bash|sh|shell)?\n([\s\S]*?)```/;

function toolResult(call: ToolCallMade, text: string): ModelMessage {
  return {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: call.id, toolName: call.name, output: { type: 'text', value: text } }],
  };
}

/** Elides the oldest tool results until the conversation fits its share (the opening message stays). */
function trim(messages: ModelMessage[], maxChars: number) {
  let size = JSON.stringify(messages).length;
  for (const m of messages) {
    if (size <= maxChars) return;
    if (m.role !== 'tool') continue;
    for (const part of m.content) {
      if (part.type !== 'tool-result' || part.output.type !== 'text' || part.output.value === ELIDED) continue;
      size -= part.output.value.length - ELIDED.length;
      part.output = { type: 'text', value: ELIDED };
    }
  }
}

const editorAction = (input: Record<string, unknown>) => `${String(input.command)} ${String(input.path)}`;

export async function agentLoop(o: LoopOptions): Promise<AgentRun> {
  const messages: ModelMessage[] = [...(o.history ?? []), { role: 'user', content: o.opening }];
  const shell: ShellState = { cwd: '' };
  const bash = async (command: string) => {
    const ran = await runCommand(o.sandbox, {
      place: o.place,
      state: shell,
      command,
      timeoutMs: o.limits.commandMs,
      signal: o.signal,
    });
    return { exitCode: ran.exitCode, observation: o.redact(ran.observation) };
  };
  const started = o.now();
  const window = o.model.contextWindow;
  // An answer's room, and what the conversation may take: the window less that room and the
  // system prompt (as the client counts a prompt), and at most HISTORY_SHARE of a large window.
  const outputTokens = Math.min(OUTPUT_TOKENS, Math.floor(window / 4));
  const maxChars = Math.min(
    Math.floor(window * 4 * HISTORY_SHARE),
    charsForTokens(window - outputTokens) - o.system.length - FIT_MARGIN_CHARS,
  );
  for (let turn = 1; turn <= o.limits.turns; turn++) {
    if (o.now() - started > o.limits.wallMs)
      return {
        submitted: false,
        turns: turn - 1,
        summary: '',
        stopped: `the wall time of ${Math.round(o.limits.wallMs / 1000)} s ran out`,
        messages,
      };
    trim(messages, maxChars);
    const answer = await o.model.turn({
      system: o.system,
      messages,
      tools: AGENT_TOOLS,
      maxOutputTokens: outputTokens,
    });
    messages.push(...answer.messages);
    const record = async (r: Omit<TurnRecord, 'turn' | 'tokens' | 'cost_usd'>) => {
      const spent = o.spent();
      await o.onTurn({
        ...r,
        turn,
        observation: headAndTail(r.observation, RECORD_CHARS.head, RECORD_CHARS.tail),
        tokens: spent.tokens,
        cost_usd: spent.costUsd,
      });
    };
    if (answer.toolCalls.length === 0) {
      // A model without tools: one fenced command per reply stands for a bash call.
      const fenced = FALLBACK_COMMAND.exec(answer.text)?.[1]?.trim();
      if (!fenced) {
        await record({ tool: 'none', action: '', observation: clip(answer.text, 500) });
        messages.push({
          role: 'user',
          content:
            'Call a tool: bash to run a command, editor to view or change a file, run_tests to run the tests, submit when the change is done.',
        });
        continue;
      }
      const { exitCode, observation } = await bash(fenced);
      await record({ tool: 'bash', action: o.redact(fenced), exit_code: exitCode, observation });
      messages.push({ role: 'user', content: `Output:\n${observation}` });
      continue;
    }
    let submitted: string | undefined;
    for (const call of answer.toolCalls) {
      const input = (call.input ?? {}) as Record<string, unknown>;
      // Every call gets its result, so the conversation stays one a provider accepts when a retry resumes it.
      if (submitted !== undefined) {
        messages.push(toolResult(call, 'Not run: the change was submitted.'));
        continue;
      }
      if (call.invalid) {
        const observation = `The call could not be run: ${call.invalid}`;
        await record({ tool: call.name, action: '', ok: false, observation });
        messages.push(toolResult(call, observation));
        continue;
      }
      if (call.name === 'submit') {
        const summary = String(input.summary ?? '');
        await record({ tool: 'submit', action: '', ok: true, observation: clip(summary, 500) });
        messages.push(toolResult(call, 'Submitted.'));
        submitted = summary;
        continue;
      }
      if (call.name === 'bash') {
        const command = String(input.command);
        const { exitCode, observation } = await bash(command);
        await record({ tool: 'bash', action: o.redact(command), exit_code: exitCode, observation });
        messages.push(toolResult(call, observation));
        continue;
      }
      if (call.name === 'run_tests') {
        const all = input.all === true;
        if (!o.runTests) {
          const observation = 'No test command was found for this repository.';
          await record({ tool: 'run_tests', action: all ? 'all' : 'focused', ok: false, observation });
          messages.push(toolResult(call, observation));
          continue;
        }
        const ran = await o.runTests(all);
        const observation = o.redact(ran.observation);
        await record({ tool: 'run_tests', action: o.redact(ran.action), exit_code: ran.exitCode, observation });
        messages.push(toolResult(call, observation));
        continue;
      }
      const done = await o.editor.run(EDITOR_INPUT.parse(input));
      const observation = o.redact(done.observation);
      await record({ tool: 'editor', action: editorAction(input), ok: done.ok, observation });
      messages.push(toolResult(call, observation));
    }
    if (submitted !== undefined) return { submitted: true, summary: submitted, turns: turn, messages };
  }
  return {
    submitted: false,
    turns: o.limits.turns,
    summary: '',
    stopped: `the model did not submit within ${o.limits.turns} turns`,
    messages,
  };
}
