import type { LanguageModelUsage } from 'ai';
import { type Price, costUsd } from './pricing.js';

/**
 * What one step's model calls have used so far; the runner adds it to the task whatever the
 * outcome. An attempt's meter (docs/agent.md, "Attempts") has the step's as its parent: what it
 * adds is the step's too, and the budget is checked against the step's whole use.
 */
export class UsageMeter {
  tokens = 0;
  costUsd = 0;
  calls = 0;
  /** The prompt and answer parts of `tokens`, as the providers reported them (or estimated). */
  inputTokens = 0;
  outputTokens = 0;
  /** Answers that were billed but could not be used (unparseable structured output, edits that did not apply). */
  malformed = 0;

  constructor(private readonly parent?: UsageMeter) {}

  /** One billed call; without the split, its tokens count as input. */
  add(tokens: number, cost: number, split: { input: number; output: number } = { input: tokens, output: 0 }): void {
    this.tokens += tokens;
    this.costUsd += cost;
    this.calls += 1;
    this.inputTokens += split.input;
    this.outputTokens += split.output;
    this.parent?.add(tokens, cost, split);
  }

  /** One answer billed but not usable. */
  noteMalformed(): void {
    this.malformed += 1;
    this.parent?.noteMalformed();
  }

  /** The meter the budget reads: the step's, whose use counts every attempt's. */
  get whole(): UsageMeter {
    return this.parent ? this.parent.whole : this;
  }
}

/** The task's limits and what it had spent before this step. */
export interface Budget {
  tokens: number;
  usd: number;
  spentTokens: number;
  spentUsd: number;
}

/** The task would go over its budget: stopped before the call, not after. */
export class BudgetExceeded extends Error {
  override name = 'BudgetExceeded';
}

/**
 * A spend limit stops the task's model calls (docs/teams.md, "Spend limits"): thrown after the call
 * whose cost reached the cap (that call's answer is paid for and already metered), and before any
 * further call. The message names the cap.
 */
export class SpendStopped extends Error {
  override name = 'SpendStopped';
}

/**
 * What the caller checks around each call: `before` may refuse to start one, `after` hears what a
 * finished call cost (recorded where the limits count it) and may stop the calls after it; both throw SpendStopped.
 */
export interface SpendGuard {
  before(): Promise<void>;
  after(usd: number): Promise<void>;
}

/** Rough and deliberately high: about four characters a token, plus a tenth for framing. */
export const estimateTokens = (chars: number) => Math.ceil((chars / 4) * 1.1);
/** The characters estimateTokens counts as at most `tokens`: what a prompt may hold. */
export const charsForTokens = (tokens: number) => Math.max(0, Math.floor((tokens * 4) / 1.1));

/** An output limit under this may not hold one edit block: callers say so when the budget forces it. */
export const LOW_OUTPUT_TOKENS = 1_024;

/**
 * Output tokens a call may use without crossing the budget, or a BudgetExceeded when even a
 * short answer would cross it. Checked before every call, so the budget is never overspent
 * by more than the estimate's error on the input.
 */
export function outputAllowance(
  budget: Budget,
  meter: UsageMeter,
  price: Price,
  inputTokens: number,
  wanted: number,
): number {
  // Concurrent attempts of one step share the budget: each call sees what all of them used.
  const usedTokens = budget.spentTokens + meter.whole.tokens;
  const usedUsd = budget.spentUsd + meter.whole.costUsd;
  const byTokens = budget.tokens - usedTokens - inputTokens;
  const byUsd =
    price.output > 0
      ? Math.floor(((budget.usd - usedUsd) * 1_000_000 - inputTokens * price.input) / price.output)
      : Number.POSITIVE_INFINITY;
  const allowance = Math.min(wanted, byTokens, byUsd);
  const MIN_USEFUL = 256;
  if (allowance < MIN_USEFUL) {
    const what =
      byTokens <= byUsd
        ? `${budget.tokens.toLocaleString('en')} tokens (${usedTokens.toLocaleString('en')} used)`
        : `$${budget.usd.toFixed(2)} (${usedUsd.toFixed(4)} used)`;
    throw new BudgetExceeded(
      `the task's model budget of ${what} does not cover another call of ` +
        `about ${inputTokens.toLocaleString('en')} input tokens; stopped rather than overspend`,
    );
  }
  return allowance;
}

/** Tokens and cost of a finished call; providers that report no usage are billed by estimate. */
export function billOf(
  usage: LanguageModelUsage | undefined,
  price: Price,
  estimatedInput: number,
  outputChars: number,
) {
  const input = usage?.inputTokens ?? estimatedInput;
  const output = usage?.outputTokens ?? estimateTokens(outputChars);
  return { tokens: input + output, costUsd: costUsd(price, input, output), input, output };
}
