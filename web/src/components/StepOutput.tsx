import type { FixOutputs, LogRecord, SiteOutputs, StepName, TaskType } from '../api/types';
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

function Validation({ o }: { o: ValidatorSeen }) {
  const verdict = o.passed === true ? 'Validation passed' : o.passed === false ? 'Validation failed' : 'Not validated';
  return (
    <div class="validator">
      <p class={`verdict verdict-${String(o.passed)}`}>
        {verdict}
        {o.tests ? ` — ${o.tests.passed} passed, ${o.tests.failed} failed, ${o.tests.skipped} skipped` : ''}
      </p>
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
export function StepOutput({ step, log, taskType }: { step: StepName; log: LogRecord; taskType: TaskType }) {
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
  return (
    <>
      {body}
      <Raw output={o} />
    </>
  );
}
