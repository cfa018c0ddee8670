import {
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
  NoObjectGeneratedError,
  Output,
  type ToolSet,
  generateText,
  streamText,
} from 'ai';
import type { z } from 'zod';
import type { LlmConfig } from '../config/llm.js';
import { redact, secretNeedles } from '../text/redact.js';
import type { ModelChoice } from './model-choice.js';
import { type Price, priceOf } from './pricing.js';
import { callDeadline } from './deadline.js';
import { type ContextWindow, checkFits, contextWindowOf } from './context-window.js';
import { redactMessages } from './redact-messages.js';
import { backoffMs, describeFailure, isTransient, sleep } from './retry.js';
import {
  type Budget,
  BudgetExceeded,
  LOW_OUTPUT_TOKENS,
  type SpendGuard,
  SpendStopped,
  type UsageMeter,
  billOf,
  estimateTokens,
  outputAllowance,
} from './usage.js';

export interface ModelClientOptions {
  choice: ModelChoice;
  /** The step the client serves, named in a context-window error (its EMEND_MODEL_CONTEXT_<STEP>). */
  step: string;
  model: LanguageModel;
  config: Pick<LlmConfig, 'timeoutMs' | 'maxRetries' | 'retryBaseMs' | 'prices'>;
  meter: UsageMeter;
  budget: Budget;
  /** The spend limits' check around every call (the runner's; none in the evaluation harness). */
  spend?: SpendGuard;
  /** Sampling temperature (config.llm.temperatures: 0 unless the operator sets another). */
  temperature: number;
  /** The task's kill switch. */
  signal: AbortSignal;
  /**
   * Every secret the service knows for the task (src/engine/task-secrets.ts): replaced by
   * `[redacted]` in every request's system prompt and messages before it leaves, whatever step or
   * provider, so repository text holding one (a committed key in AGENTS.md) never reaches a model.
   */
  secrets?: string[];
  log(message: string, data?: Record<string, unknown>): void;
}

export interface Ask {
  system: string;
  messages: ModelMessage[];
  /** Longest answer wanted; the budget may allow less. */
  maxOutputTokens?: number;
}

/** A free-text answer and how it ended. */
export interface TextAnswer {
  text: string;
  /** The provider's finish reason as the SDK names it: `length` when the output limit cut it off. */
  finishReason: string;
  /** The output limit the call had: the one asked for, or less when the budget lowered it. */
  maxOutputTokens: number;
}

/** A tool call the model made: its id (answered by a tool result of the same id), the tool, its arguments. */
export interface ToolCallMade {
  id: string;
  name: string;
  input: unknown;
  /** The arguments did not match the tool's schema (or the tool is unknown): why, for the model. */
  invalid?: string;
}

/** One turn of a tool-using conversation: what the model said, the tools it called, the messages to keep. */
export interface ToolTurn {
  text: string;
  toolCalls: ToolCallMade[];
  finishReason: string;
  /** The assistant's messages as the SDK records them, to append to the conversation. */
  messages: ModelMessage[];
}

/** A model call failed for good (after retries): the step fails with this message. */
export class ModelCallFailed extends Error {
  override name = 'ModelCallFailed';
}

const chars = (ask: Ask) => ask.system.length + JSON.stringify(ask.messages).length;

/**
 * One step's access to its model: structured answers and streamed text, each call checked
 * against the task's budget first, billed into the step's meter (answers that fail to parse
 * included), retried with back-off on 429, 5xx and dropped connections, and stopped by a kill.
 */
export class ModelClient {
  readonly price: Price;
  /** The model's window and where the number came from; every call's prompt + output must fit it. */
  readonly window: ContextWindow;

  private readonly secrets: string[];

  constructor(private readonly o: ModelClientOptions) {
    this.price = priceOf(o.choice.model, o.config.prices);
    this.window = contextWindowOf(o.choice);
    this.secrets = secretNeedles(o.secrets ?? []);
  }

  /** `text` with every secret of the task replaced by `[redacted]`: what a request would carry of it. */
  redact(text: string): string {
    return redact(text, this.secrets);
  }

  /** The messages as a request carries them (a copy, every secret of the task replaced). */
  redactMessages(messages: ModelMessage[]): ModelMessage[] {
    return this.secrets.length ? redactMessages(messages, (t) => this.redact(t)) : messages;
  }

  /** Tokens the model takes in and gives out in one call: prompt sizes are measured against it. */
  get contextWindow(): number {
    return this.window.tokens;
  }

  get provider() {
    return this.o.choice.provider;
  }
  get modelId() {
    return this.o.choice.model;
  }

  /**
   * A JSON answer matching the schema. An answer that does not parse is billed, counted, and
   * sent back to the model with the reason, up to `attempts` answers in all.
   */
  async object<T>(ask: Ask & { schema: z.ZodType<T>; name: string; attempts?: number }): Promise<T> {
    const messages = [...ask.messages];
    const attempts = ask.attempts ?? 3;
    for (let n = 1; ; n++) {
      try {
        return await this.call({ ...ask, messages }, async (settings) => {
          const r = await generateText({ ...settings, output: Output.object({ schema: ask.schema, name: ask.name }) });
          return { value: r.output as T, usage: r.usage, outputChars: r.text.length };
        });
      } catch (err) {
        if (!NoObjectGeneratedError.isInstance(err)) throw err;
        this.o.meter.noteMalformed();
        const reason = ((err.cause as Error | undefined)?.message ?? err.message).slice(0, 1500);
        this.o.log('model answer did not match the schema', { attempt: n, reason: reason.slice(0, 300) });
        if (n >= attempts)
          throw new ModelCallFailed(
            `${this.o.choice.provider} ${this.o.choice.model} gave ${n} answers that did not match ` +
              `the ${ask.name} schema; last problem: ${reason.slice(0, 300)}`,
          );
        messages.push(
          { role: 'assistant', content: err.text?.trim() ? err.text : '(empty answer)' },
          {
            role: 'user',
            content:
              `That answer could not be used: ${reason}\nAnswer again with only the JSON object for ${ask.name}, ` +
              `matching the schema.`,
          },
        );
      }
    }
  }

  /** What this step's calls have cost so far (its meter). */
  spent(): { tokens: number; costUsd: number } {
    return { tokens: this.o.meter.tokens, costUsd: this.o.meter.costUsd };
  }

  /** Counts an answer that was billed but could not be used (the caller's own check failed). */
  noteMalformed(): void {
    this.o.meter.noteMalformed();
  }

  /** The sampling temperature of this client's calls. */
  get temperature(): number {
    return this.o.temperature;
  }

  /**
   * Free text, streamed (a kill stops it mid-way). The whole answer must arrive within the
   * call's timeout. A stream the SDK ends with an `abort` part (the time ran out, or a kill)
   * is a failed call, never an answer: its partial text (often "") is thrown away, not billed,
   * and a timeout is retried like any other.
   */
  async text(ask: Ask): Promise<TextAnswer> {
    return this.call(ask, async (settings) => {
      const result = streamText({ ...settings, onError: () => {} });
      let text = '';
      let finishReason = 'unknown';
      let usage: LanguageModelUsage | undefined;
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') text += part.text;
        else if (part.type === 'error') throw part.error;
        else if (part.type === 'abort')
          throw settings.abortSignal.reason ?? new DOMException('the model stream was aborted', 'AbortError');
        else if (part.type === 'finish') {
          usage = part.totalUsage;
          finishReason = part.finishReason;
        }
      }
      const value = { text, finishReason, maxOutputTokens: settings.maxOutputTokens };
      return { value, usage, outputChars: text.length };
    });
  }

  /**
   * One turn with tools offered and none executed here: the caller runs the calls and sends their
   * results back as tool messages. Budget, billing, retries and the kill as for every call.
   */
  async turn(ask: Ask & { tools: ToolSet }): Promise<ToolTurn> {
    return this.call(ask, async (settings) => {
      const r = await generateText({ ...settings, tools: ask.tools, toolChoice: 'auto' });
      const toolCalls = r.toolCalls.map((c) => ({
        id: c.toolCallId,
        name: c.toolName,
        input: c.input,
        ...(c.invalid ? { invalid: 'error' in c ? String(c.error) : 'the arguments did not match the tool' } : {}),
      }));
      const value = { text: r.text, toolCalls, finishReason: r.finishReason, messages: r.response.messages };
      return { value, usage: r.usage, outputChars: r.text.length + JSON.stringify(toolCalls).length };
    });
  }

  private async call<T>(
    ask: Ask,
    run: (settings: {
      model: LanguageModel;
      system: string;
      messages: ModelMessage[];
      maxOutputTokens: number;
      temperature: number;
      maxRetries: 0;
      abortSignal: AbortSignal;
    }) => Promise<{ value: T; usage: LanguageModelUsage | undefined; outputChars: number }>,
  ): Promise<T> {
    const { choice, meter, budget, config, signal } = this.o;
    // The one place every request of every step passes: what leaves is the redacted copy.
    const sent: Ask = { ...ask, system: this.redact(ask.system), messages: this.redactMessages(ask.messages) };
    const input = estimateTokens(chars(sent));
    await this.o.spend?.before();
    for (let retry = 0; ; retry++) {
      const wanted = ask.maxOutputTokens ?? 8_000;
      const maxOutputTokens = outputAllowance(budget, meter, this.price, input, wanted);
      // Never lowered in silence: a limit this small may not hold one edit block.
      if (maxOutputTokens < Math.min(wanted, LOW_OUTPUT_TOKENS))
        this.o.log('the budget lowers the output limit', { wanted, allowed: maxOutputTokens });
      // Before any request: a server that cuts the prompt's start would answer without the system prompt.
      checkFits(this.o.step, choice.model, this.window, input, maxOutputTokens);
      // Held in this scope for the whole call, cleared in `finally` (see deadline.ts for why not AbortSignal.timeout).
      const deadline = callDeadline(signal, config.timeoutMs);
      try {
        const r = await run({
          model: this.o.model,
          system: sent.system,
          messages: sent.messages,
          maxOutputTokens,
          temperature: this.o.temperature,
          maxRetries: 0,
          abortSignal: deadline.signal,
        });
        const bill = billOf(r.usage, this.price, input, r.outputChars);
        meter.add(bill.tokens, bill.costUsd, bill);
        await this.o.spend?.after(bill.costUsd);
        return r.value;
      } catch (err) {
        deadline.done();
        if (NoObjectGeneratedError.isInstance(err)) {
          const bill = billOf(err.usage, this.price, input, err.text?.length ?? 0);
          meter.add(bill.tokens, bill.costUsd, bill);
          await this.o.spend?.after(bill.costUsd);
          throw err;
        }
        if (signal.aborted || err instanceof BudgetExceeded || err instanceof SpendStopped) throw err;
        if (!isTransient(err) || retry >= config.maxRetries) {
          throw new ModelCallFailed(
            describeFailure(choice.provider, choice.model, err) + (retry > 0 ? ` (after ${retry + 1} tries)` : ''),
          );
        }
        const wait = backoffMs(err, retry, config.retryBaseMs);
        this.o.log('model call failed; retrying', {
          problem: describeFailure(choice.provider, choice.model, err),
          retry: retry + 1,
          wait_ms: Math.round(wait),
        });
        await sleep(wait, signal);
      } finally {
        deadline.done();
      }
    }
  }
}
