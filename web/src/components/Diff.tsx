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
    // A region of its own, named by the label, and focusable so a keyboard can scroll a wide diff (WCAG 2.1.1).
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    // biome-ignore lint/a11y/useSemanticElements: the text is preformatted; a <section> would lose that
    <pre class="diff" role="region" aria-label={label} tabIndex={0}>
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
