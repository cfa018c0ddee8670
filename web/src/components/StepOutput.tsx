import type { FixOutputs, LogRecord, SiteOutputs, TaskType } from '../api/types';
import { Diff } from './Diff';

/**
 * A step's output read through the contract's types (generated from the document). Partial:
 * a log written before a field existed lacks it, so every field is checked before it is shown.
 */
type Seen<T> = Partial<T>;
type ValidatorSeen = Seen<FixOutputs['validator']> & Seen<Pick<SiteOutputs['validator'], 'problems'>>;

const list = (items: unknown) =>
  Array.isArray(items) ? items.filter((i) => typeof i === 'string' || typeof i === 'object') : [];

function Raw({ output }: { output: Record<string, unknown> }) {
  return (
    <details>
      <summary>All of the step’s output</summary>
      <pre class="raw">{JSON.stringify(output, null, 2)}</pre>
    </details>
  );
}

function Plan({ o }: { o: Seen<FixOutputs['planner']> }) {
  return (
    <div class="plan">
      {o.summary && <p>{String(o.summary)}</p>}
      {list(o.steps).length > 0 && (
        <ol>
          {list(o.steps).map((s, i) => (
            <li key={i}>{String(s)}</li>
          ))}
        </ol>
      )}
      {list(o.likely_files).length > 0 && <p>Likely files: {list(o.likely_files).map(String).join(', ')}</p>}
      {o.test_strategy && <p>Testing: {String(o.test_strategy)}</p>}
      {list(o.risks).length > 0 && <p>Risks: {list(o.risks).map(String).join('; ')}</p>}
    </div>
  );
}

function LocatedFiles({ o }: { o: Seen<FixOutputs['locator']> }) {
  const selected = list(o.selected).map(String);
  const ranked = Array.isArray(o.files) ? o.files.map((f) => String(f.path)) : [];
  return (
    <ul class="files">
      {(selected.length ? selected : ranked).map((p) => (
        <li key={p}>
          <code>{p}</code>
        </li>
      ))}
    </ul>
  );
}

function Insights({ o }: { o: Seen<FixOutputs['inspector']> }) {
  return (
    <div>
      {o.summary && <p>{String(o.summary)}</p>}
      <ul class="insights">
        {(Array.isArray(o.insights) ? o.insights : []).map((ins, i) => (
          <li key={i}>
            <code>{String(ins.file)}</code> {ins.relevance && <span class="badge">{String(ins.relevance)}</span>}
            {list(ins.symbols).length > 0 && (
              <ul>
                {ins.symbols.map((s, j) => (
                  <li key={j}>
                    <code>{String(s.name)}</code> lines {String(s.start_line)}–{String(s.end_line)}
                    {s.change ? `: ${String(s.change)}` : ''}
                  </li>
                ))}
              </ul>
            )}
            {ins.notes && <p>{String(ins.notes)}</p>}
          </li>
        ))}
      </ul>
    </div>
  );
}

type Focus = NonNullable<FixOutputs['validator']['focus']>;

/** Which pass a verdict is (docs/validator.md, "The focused pass"), in a few words; null when none was asked for. */
export function passOf(o: { pass?: unknown }): string | null {
  if (o.pass === 'focused') return 'focused pass';
  if (o.pass === 'full') return 'full pass';
  return null;
}

/** A focused pass's test files, each with why it was chosen, and its result. */
function FocusedFiles({ focus }: { focus: Partial<Focus> }) {
  const files = Array.isArray(focus.files) ? focus.files : [];
  const result = focus.passed === true ? 'passed' : focus.passed === false ? 'failed' : 'validated nothing';
  return (
    <div class="focus" data-passed={String(focus.passed)}>
      <p>
        The focused pass {result}
        {typeof focus.duration_ms === 'number' ? ` in ${(focus.duration_ms / 1000).toFixed(1)} s` : ''}, on{' '}
        {files.length} test file{files.length === 1 ? '' : 's'}:
      </p>
      <ul class="files">
        {files.map((f) => (
          <li key={String(f.path)}>
            <code>{String(f.path)}</code> <span class="badge">{String(f.reason)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Validation({ o }: { o: ValidatorSeen }) {
  const verdict = o.passed === true ? 'Validation passed' : o.passed === false ? 'Validation failed' : 'Not validated';
  return (
    <div class="validator">
      <p class={`verdict verdict-${String(o.passed)}`}>
        {verdict}
        {o.tests ? ` — ${o.tests.passed} passed, ${o.tests.failed} failed, ${o.tests.skipped} skipped` : ''}
      </p>
      {o.pass && (
        <p class="pass" data-pass={String(o.pass)}>
          {o.pass === 'focused'
            ? 'Focused pass: only the test files the change touches ran, and failed; the whole suite was not run.'
            : o.focus
              ? 'Full pass: the whole suite ran after the focused pass.'
              : 'Full pass: the whole suite ran (no focused pass).'}
        </p>
      )}
      {o.focus && <FocusedFiles focus={o.focus} />}
      {o.message && <p>{String(o.message)}</p>}
      {o.command && (
        <p>
          Command: <code>{String(o.command)}</code>
        </p>
      )}
      {list(o.new_failures).length > 0 && <p>New failures: {list(o.new_failures).map(String).join(', ')}</p>}
      {list(o.problems).length > 0 && (
        <ul>
          {(Array.isArray(o.problems) ? o.problems : []).map((p, i) => (
            <li key={i}>{typeof p === 'string' ? p : (p.message ?? JSON.stringify(p))}</li>
          ))}
        </ul>
      )}
      {o.log_tail && (
        <details>
          <summary>Test output (end)</summary>
          <pre class="raw">{String(o.log_tail)}</pre>
        </details>
      )}
    </div>
  );
}

/** A field's name as a heading: `files_changed` → "Files changed". */
const label = (key: string) => key.charAt(0).toUpperCase() + key.slice(1).replaceAll('_', ' ');

/** One value of an output, whatever its shape: text, a list, or the fields of an object. */
function Value({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span class="hint">none</span>;
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="hint">none</span>;
    if (value.every((v) => typeof v !== 'object' || v === null)) return <>{value.map(String).join(', ')}</>;
    return (
      <ol>
        {value.map((v, i) => (
          <li key={i}>
            <Value value={v} />
          </li>
        ))}
      </ol>
    );
  }
  if (typeof value === 'object') return <Fields o={value as Record<string, unknown>} />;
  const text = String(value);
  return text.includes('\n') ? <pre class="raw">{text}</pre> : <>{text}</>;
}

function Fields({ o }: { o: Record<string, unknown> }) {
  return (
    <dl class="facts fields">
      {Object.entries(o).flatMap(([key, value]) => [
        <dt key={`name-${key}`}>{label(key)}</dt>,
        <dd key={`value-${key}`}>
          <Value value={value} />
        </dd>,
      ])}
    </dl>
  );
}

/**
 * The view of a step the panel has none of its own for (a site's plan and files, or a step
 * added after this panel was built): its output's fields as the step's output schema gives them.
 */
function GenericOutput({ o }: { o: Record<string, unknown> }) {
  return (
    <div class="generic">
      <Fields o={o} />
    </div>
  );
}

function PullRequest({ o }: { o: Seen<FixOutputs['pr']> }) {
  return (
    <p>
      {o.draft ? 'Draft pull request' : 'Pull request'}:{' '}
      <a href={String(o.pr_url)} target="_blank" rel="noopener noreferrer">
        {String(o.pr_url)}
      </a>
    </p>
  );
}

/** What a finished step produced, in the shape the step contract gives each step's output. */
export function StepOutput({ step, log, taskType }: { step: string; log: LogRecord; taskType: TaskType }) {
  // The stream's JSON, read through each step's contract type below (field by field, as Seen<>).
  // biome-ignore lint/suspicious/noExplicitAny: the one place a log's output meets its step's type
  const o: Record<string, any> = log.output ?? {};
  if (log.status === 'skipped') return <p class="hint">{String(o.reason ?? 'Skipped.')}</p>;
  if (log.status === 'failed' && o.error) {
    return (
      <>
        <p class="task-error">{String(o.error)}</p>
        <Raw output={o} />
      </>
    );
  }
  let body = null;
  if (step === 'planner' && taskType === 'fix') body = <Plan o={o} />;
  else if (step === 'locator') body = <LocatedFiles o={o} />;
  else if (step === 'inspector') body = <Insights o={o} />;
  else if (step === 'fixer' && typeof o.diff === 'string') {
    body = (
      <div>
        {o.notes && <p>{String(o.notes)}</p>}
        <Diff text={o.diff} label="The change the fixer made" />
      </div>
    );
  } else if (step === 'validator') body = <Validation o={o} />;
  else if (step === 'pr' && o.pr_url) body = <PullRequest o={o} />;
  else body = <GenericOutput o={o} />;
  return (
    <>
      {body}
      <Raw output={o} />
    </>
  );
}
