import type { LogRecord } from '../api/types';
import { Diff } from './Diff';

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

/** What a finished step produced, in the shape each step writes (src/pipeline/steps). */
export function StepOutput({ step, log, taskType }: { step: string; log: LogRecord; taskType: string }) {
  // Typed per step once the document names each step's output (the step contract).
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
  if (step === 'planner' && taskType === 'fix') {
    body = (
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
  } else if (step === 'locator') {
    const selected: string[] = list(o.selected).map(String);
    body = (
      <ul class="files">
        {(selected.length ? selected : list(o.files).map((f: any) => String(f.path))).map((p) => (
          <li key={p}>
            <code>{p}</code>
          </li>
        ))}
      </ul>
    );
  } else if (step === 'inspector') {
    body = (
      <div>
        {o.summary && <p>{String(o.summary)}</p>}
        <ul class="insights">
          {list(o.insights).map((ins: any, i) => (
            <li key={i}>
              <code>{String(ins.file)}</code> {ins.relevance && <span class="badge">{String(ins.relevance)}</span>}
              {list(ins.symbols).length > 0 && (
                <ul>
                  {list(ins.symbols).map((s: any, j) => (
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
  } else if (step === 'fixer' && typeof o.diff === 'string') {
    body = (
      <div>
        {o.notes && <p>{String(o.notes)}</p>}
        <Diff text={o.diff} label="The change the fixer made" />
      </div>
    );
  } else if (step === 'validator') {
    const verdict =
      o.passed === true ? 'Validation passed' : o.passed === false ? 'Validation failed' : 'Not validated';
    body = (
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
            {list(o.problems).map((p: any, i) => (
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
  } else if (step === 'pr' && o.pr_url) {
    body = (
      <p>
        {o.draft ? 'Draft pull request' : 'Pull request'}:{' '}
        <a href={String(o.pr_url)} target="_blank" rel="noopener noreferrer">
          {String(o.pr_url)}
        </a>
      </p>
    );
  }
  return (
    <>
      {body}
      <Raw output={o} />
    </>
  );
}
