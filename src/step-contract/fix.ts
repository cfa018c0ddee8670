import { z } from 'zod';
import { modelUsage } from './usage.js';

/** The fix planner's answer, as the model is asked for it. */
export const PlanSchema = z.object({
  summary: z.string().describe('One or two sentences: what will change and why.'),
  steps: z.array(z.string()).describe('The change as concrete steps, in order.'),
  likely_files: z
    .array(z.string())
    .describe('Repository-relative paths most likely to change (or be created), most likely first; at most 10.'),
  new_files: z
    .array(z.string())
    .describe('Of likely_files, those the change creates (they do not exist yet); empty when none.'),
  test_strategy: z.string().describe('How the change will be checked: which tests to run or add.'),
  risks: z.array(z.string()).describe('What could go wrong or break; empty when nothing stands out.'),
});

/** The fix planner's output: the plan, the memory it used, its model; a reviewer may have edited it at the gate. */
export const PlannerOutput = PlanSchema.extend({
  // Absent from plans made before the planner was asked for it.
  new_files: z.array(z.string()).optional(),
  memory_used: z.array(z.string()),
  model: z.string(),
  edited_by_reviewer: z.boolean().optional(),
  ...modelUsage,
});
export type PlannerOutput = z.infer<typeof PlannerOutput>;

export const LocatorOutput = z.object({
  /** Every ranked file, best first, with why it was found. */
  files: z.array(z.object({ path: z.string(), score: z.number(), reasons: z.array(z.string()) })),
  /** The first files of the ranking, as many as the plan's limits allow: what the next steps read. */
  selected: z.array(z.string()),
  reranked: z.boolean(),
  index: z.object({ cache: z.enum(['hit', 'miss', 'off']), files: z.number(), ms: z.number() }),
  ...modelUsage,
});
export type LocatorOutput = z.infer<typeof LocatorOutput>;

/** One file as the inspector judged it: how relevant, and what to change where. */
export const Insight = z.object({
  file: z.string(),
  relevance: z.enum(['high', 'medium', 'low']),
  symbols: z
    .array(
      z.object({
        name: z.string(),
        start_line: z.number().int(),
        end_line: z.number().int(),
        change: z.string().describe('What to change here, concretely.'),
      }),
    )
    .describe('Functions, classes or blocks to change, with their line ranges as numbered in the file shown.'),
  notes: z.string().describe('Anything else about this file that matters for the change; empty if nothing.'),
});
export type Insight = z.infer<typeof Insight>;

/** The inspector's answer, as the model is asked for it. */
export const InsightsSchema = z.object({
  summary: z
    .string()
    .describe('For a person reading the result: where the change belongs and why, in a few plain sentences.'),
  insights: z.array(Insight),
});

export const InspectorOutput = InsightsSchema.extend({
  /** The files the inspector was shown. */
  files: z.array(z.string()),
  model: z.string(),
  ...modelUsage,
});
export type InspectorOutput = z.infer<typeof InspectorOutput>;

/** One of a fix task's fixer attempts, as the fixer step's output shows it (docs/agent.md, "Attempts"). */
export const FixAttempt = z.object({
  /** 1, 2, …: the order the attempts were started in (ties of the ranking go to the earliest). */
  attempt: z.number().int(),
  fixer: z.enum(['pipeline', 'agent']),
  /** The sampling temperature of its model calls. */
  temperature: z.number(),
  /** `validated`: it made a change and the validator judged it; `failed`: the fixer or its validation threw (`error`). */
  status: z.enum(['validated', 'failed']),
  error: z.string().optional(),
  /** The validator's verdict: true, false, or null (nothing validated; also when the attempt failed). */
  passed: z.boolean().nullable(),
  /** Which rule decided the verdict (docs/validator.md, "Reproduction test"); null when there was none. */
  rule: z.enum(['reproduction', 'no-new-failures']).nullable(),
  /** The change's tests that failed on the base commit and pass with it: the reproduction's evidence. */
  now_passing: z.number().int(),
  /** The change's tests that still fail with it. */
  still_failing: z.number().int(),
  /** Its new failures (the first 10 ids) and how many there were. */
  new_failures: z.array(z.string()),
  new_failure_count: z.number().int(),
  files_changed: z.array(z.string()),
  /** The change's size: lines added and removed. */
  lines_added: z.number().int(),
  lines_removed: z.number().int(),
  /** Its diff cut to 4 KB, as the task's diff_summary is. */
  diff_summary: z.string(),
  /** Its whole diff against the base commit: the others' changes stay readable here. */
  diff: z.string(),
  tokens: z.number().int(),
  cost_usd: z.number(),
  duration_ms: z.number().int(),
  chosen: z.boolean(),
});
export type FixAttempt = z.infer<typeof FixAttempt>;

/** Which attempt's change the task keeps, and why (the ranking's deciding criterion, in words). */
export const AttemptChoice = z.object({ attempt: z.number().int(), reason: z.string() });
export type AttemptChoice = z.infer<typeof AttemptChoice>;

export const FixerOutput = z.object({
  /** The git diff of the checkout against the base commit. */
  diff: z.string(),
  files_changed: z.array(z.object({ path: z.string(), kind: z.enum(['modified', 'created', 'deleted']) })),
  edits_applied: z.number().int(),
  edits_failed: z.array(z.object({ path: z.string(), reason: z.string() })),
  rounds: z.number().int(),
  notes: z.string(),
  memory_used: z.array(z.string()),
  model: z.string(),
  /** A task of several attempts: every attempt, in order; the fields above are the chosen one's. */
  attempts: z.array(FixAttempt).optional(),
  choice: AttemptChoice.optional(),
  ...modelUsage,
});
export type FixerOutput = z.infer<typeof FixerOutput>;

// The validator's output: these schemas are its only declaration. src/validator/ produces values of
// the inferred types, so a field added here reaches the validator's code, and one the validator
// would add without a schema cannot compile, instead of being stored and then dropped by the parse
// when the fixer's retry reads it back.

/** How a run's dependency install went: none needed, done, skipped (said why), or failed. */
export const SetupState = z.enum(['none', 'ok', 'skipped', 'failed']);
export type SetupState = z.infer<typeof SetupState>;

/** A test the validator stopped a run at, for running past the per-test timeout. */
export const HungTest = z.object({
  /** The runner's id of the test: it is among the run's failures. */
  id: z.string(),
  reason: z.string(),
  /** Tests the run had collected and never reached, when the runner said how many it collected. */
  not_run: z.number().int().nullable(),
});
export type HungTest = z.infer<typeof HungTest>;

/** What the setup phase did, as the step output shows it. */
export const SetupReport = z.object({
  command: z.string(),
  network: z.boolean(),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number(),
  /** Why it did not run, when it did not. */
  skipped: z.string().optional(),
  timed_out: z.boolean().optional(),
  /** The end of its output when it failed. */
  log_tail: z.string().optional(),
  /**
   * A failed setup's destinations it could not reach: the proxy's refusals (`refused: host:port
   * (why), …`, at most five named) and each dependency that needed a code host setup could not reach.
   */
  unreached: z.array(z.string()).optional(),
  /** What setup did to get through, when it did something (an install run again without dependencies' scripts). */
  notes: z.array(z.string()).optional(),
  /** Through the egress proxy: each destination reached or refused (why), with the bytes each way (docs/environments.md). */
  connections: z
    .array(
      z.object({
        host: z.string(),
        port: z.number().int(),
        allowed: z.boolean(),
        reason: z.string().optional(),
        requests: z.number().int(),
        bytes_out: z.number().int(),
        bytes_in: z.number().int(),
      }),
    )
    .optional(),
  /**
   * The environment came from the cache (docs/environments.md, "Cached environments"): `hit`, laid
   * from an entry; `built`, from the entry this validation's baseline setup just stored.
   */
  environment: z.object({ key: z.string(), cache: z.enum(['hit', 'built']) }).optional(),
  /** A failed setup whose output is node-gyp's: the dependency whose native module did not build, and why. */
  native_build: z.object({ package: z.string(), error: z.string() }).optional(),
});
export type SetupReport = z.infer<typeof SetupReport>;

/** The baseline's result, kept so a fixer retry on the same commit need not run it again. */
export const BaselineSummary = z.object({
  commit: z.string(),
  command: z.string(),
  failures: z.array(z.string()),
  tests: z.number().int(),
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number(),
  /** How its dependency install went. */
  setup: SetupState,
  /** The test the run was stopped at for running past the per-test timeout; the tests after it did not run. */
  hung: HungTest.optional(),
  /** The change's test files ran on this baseline too: their paths and contents, hashed (the cache key). */
  test_files_digest: z.string().optional(),
  /** The failures that belong to the change's test files: what a reproduction must turn into passes. */
  test_file_failures: z.array(z.string()).optional(),
  /**
   * The baseline did not run in this validation (docs/validator.md, "Kept baselines"): `store`, kept
   * by an earlier validation on the same base commit, environment, command and test files (its key,
   * and when it ran); `retry`, the fixer's previous validation's output. Absent: it ran here.
   */
  reused: z
    .object({ from: z.enum(['store', 'retry']), key: z.string().optional(), ran_at: z.string().optional() })
    .optional(),
});
export type BaselineSummary = z.infer<typeof BaselineSummary>;

/** One new failure as the runner told it: the fixer's retry prompt shows it, and its files are added to the view. */
export const FailureDetail = z.object({
  /** The runner's id, as in new_failures. */
  test: z.string(),
  /** The file that holds the test, relative to the checkout, when the id or the runner names it. */
  test_file: z.string().optional(),
  /** The assertion message or exception, at most 500 characters. */
  message: z.string().max(500).optional(),
  /** The innermost frame in the repository's own files (not installed packages, the library or the runner). */
  frame: z.object({ path: z.string(), line: z.number().int() }).optional(),
});
export type FailureDetail = z.infer<typeof FailureDetail>;

/** The change's tests on the base commit and on the change (docs/validator.md, "Reproduction test"). */
export const Reproduction = z.object({
  /** What decided `passed`: a reproduction test, or (the change has no test file) no new failures alone. */
  rule: z.enum(['reproduction', 'no-new-failures']),
  /** The test files the change adds or modifies: they ran on the base commit too. */
  test_files: z.array(z.string()),
  /** Their tests that failed (or errored) on the base commit with them. */
  failed_on_base: z.array(z.string()),
  /** Of those, the ones that pass with the change: the reproduction. */
  now_passing: z.array(z.string()),
  /** Their tests that fail with the change (they are among new_failures). */
  still_failing: z.array(z.string()),
  /**
   * Their tests that failed on the base commit and fail with the change in lines the change did
   * not touch: pre-existing failures (among preexisting_failures), not counted as still failing.
   */
  untouched_failing: z.array(z.string()).optional(),
  /** The verdict in words. */
  note: z.string(),
});
export type Reproduction = z.infer<typeof Reproduction>;

/** The validator's result: the step output (src/validator/validate.ts produces it) and what `emend validate --json` prints. */
export const ValidatorOutput = z.object({
  /** The test command as run (with the timeout flags added), or null when none was found. */
  command: z.string().nullable(),
  /** The dependency install of the change's run, or null when nothing needed installing. */
  setup: SetupReport.nullable(),
  /** No new failures; null when nothing was validated (no tests, or tests that run on neither tree). */
  passed: z.boolean().nullable(),
  new_failures: z.array(z.string()),
  /** The new failures' messages and frames, at most 30, in new_failures' order. */
  failure_details: z.array(FailureDetail).max(30).optional(),
  fixed: z.array(z.string()),
  preexisting_failures: z.array(z.string()),
  /**
   * Tests that failed on the change's tree (and not on the baseline) and changed their result when
   * the command ran again on the same tree: not counted among new_failures. Present when a re-run happened.
   */
  flaky: z.array(z.string()).optional(),
  /** Each re-run suspect's results, first run then re-run, per tree (the baseline's first absent when reused). */
  reruns: z
    .array(
      z.object({
        test: z.string(),
        change: z.array(z.enum(['passed', 'failed', 'skipped', 'not run'])),
        baseline: z.array(z.enum(['passed', 'failed', 'skipped', 'not run'])),
      }),
    )
    .optional(),
  /** Failing tests on the change's tree whose failure says they reached for the network (the test phase has none). */
  needs_network: z.array(z.string()).optional(),
  duration_ms: z.number(),
  /** The end of the change's test output. */
  log_tail: z.string(),
  /** Why passed is null, or anything else a reader should know. */
  message: z.string().optional(),
  source: z.enum(['setting', 'repo-file', 'memory', 'detected']).optional(),
  runner: z.enum(['node', 'pytest', 'unittest', 'tox', 'go', 'cargo', 'maven', 'gradle', 'make']).optional(),
  /**
   * Test counts of the change's run: by the tests its output names, or by a runner's printed totals
   * where they count more (a command from settings or `.emend/test` runs without the flags that name
   * each test). Absent when the output has neither: the counts are unknown, not zero.
   */
  tests: z.object({ passed: z.number().int(), failed: z.number().int(), skipped: z.number().int() }).optional(),
  /** The test the change's run was stopped at for running past the per-test timeout (it is among the failures). */
  hung: HungTest.optional(),
  baseline: BaselineSummary.optional(),
  /** The change's tests on the base commit and on the change, and which rule decided `passed`. */
  reproduction: Reproduction.optional(),
  /**
   * Which pass this verdict is (docs/validator.md, "The focused pass"): `focused`, only the test files the
   * change touches first, on both trees, a failing verdict given before the whole suite ran; `full`, the
   * whole suite. Absent when no focused pass was asked for (the whole suite ran, as always).
   */
  pass: z.enum(['focused', 'full']).optional(),
  /** The focused pass's test files and why each was chosen; present when a focused pass ran. */
  focus: z
    .object({
      files: z.array(
        z.object({ path: z.string(), reason: z.enum(['changed', 'failed last time', 'imports a changed module']) }),
      ),
      command: z.string(),
      /** Its result: the verdict itself when `pass` is `focused`; the whole suite ran after it passed otherwise. */
      passed: z.boolean().nullable(),
      duration_ms: z.number(),
    })
    .optional(),
});
export type ValidatorOutput = z.infer<typeof ValidatorOutput>;

export const PrOutput = z.object({
  pr_url: z.string(),
  number: z.number().int(),
  branch: z.string(),
  /** The pushed branch as the pull request names it (owner:branch for a fork). */
  head: z.string(),
  base: z.string(),
  commit: z.string(),
  draft: z.boolean(),
  drafts_disallowed: z.boolean(),
  /** The fork pushed to (owner/name), or null when the repository itself took the push. */
  fork: z.string().nullable(),
  /** Present when an earlier run of the task had already opened this pull request. */
  reused: z.literal(true).optional(),
});
export type PrOutput = z.infer<typeof PrOutput>;
