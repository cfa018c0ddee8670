const DIFF_SUMMARY_BYTES = 4096;

/**
 * diff_summary: the unified diff cut to 4 KB (marker included) on a line boundary, so no
 * hunk line is shown half; the marker says how much was left out.
 */
export function truncateDiff(diff: string): string {
  const total = Buffer.byteLength(diff, 'utf8');
  if (total <= DIFF_SUMMARY_BYTES) return diff;
  const marker = (shown: number) => `... diff truncated: ${shown} of ${total} bytes shown ...\n`;
  const room = DIFF_SUMMARY_BYTES - Buffer.byteLength(marker(total), 'utf8');
  const head = Buffer.from(diff, 'utf8').subarray(0, room).toString('utf8');
  const cut = head.lastIndexOf('\n');
  const kept = cut >= 0 ? head.slice(0, cut + 1) : '';
  return kept + marker(Buffer.byteLength(kept, 'utf8'));
}
