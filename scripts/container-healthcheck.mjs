#!/usr/bin/env node
// The image's HEALTHCHECK (installed as /usr/local/bin/emend-healthcheck): exit 0 when this
// container's `emend serve` answers GET /health with 200, 1 otherwise. A file and not an inline
// `node -e`, so every engine and compose implementation runs it without quoting it.
const port = process.env.PORT || '3000';
const host = process.env.HOST && !['0.0.0.0', '::'].includes(process.env.HOST) ? process.env.HOST : '127.0.0.1';
const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/health`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
