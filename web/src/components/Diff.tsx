/** A unified diff, coloured line by line: file headers, hunk headers, additions, removals, context. */
function kindOf(line: string): string {
  if (line.startsWith('diff --git') || line.startsWith('index ') || line.startsWith('+++') || line.startsWith('---'))
    return 'file';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  if (line.startsWith('...') || line.startsWith('\\')) return 'note';
  return 'ctx';
}

export function Diff({ text, label }: { text: string; label: string }) {
  const lines = text.replace(/\n$/, '').split('\n');
  return (
    <pre class="diff" aria-label={label} tabIndex={0}>
      <code>
        {lines.map((line, i) => (
          <span key={i} class={`diff-${kindOf(line)}`}>
            {line}
            {'\n'}
          </span>
        ))}
      </code>
    </pre>
  );
}
