const LABELS: Record<string, string> = {
  pending: 'queued',
  running: 'running',
  awaiting_plan: 'waiting for plan approval',
  awaiting_diff: 'waiting for diff approval',
  done: 'done',
  failed: 'failed',
  cancelled: 'cancelled',
  skipped: 'skipped',
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge badge-${status}`} data-status={status}>
      {LABELS[status] ?? status}
    </span>
  );
}

export const money = (usd: number) => `$${usd.toFixed(usd < 0.1 ? 4 : 2)}`;
export const when = (iso: string) => new Date(iso).toLocaleString();
