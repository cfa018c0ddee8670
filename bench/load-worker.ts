import autocannon, { type Request } from 'autocannon';

/** One autocannon run, described in plain data so it crosses the thread boundary. */
export interface LoadJob {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Authorization header values; requests take them in turn (one value: every request uses it). */
  authorizations: string[];
  connections: number;
  seconds: number;
}

export interface LoadResult {
  seconds: number;
  /** Completed requests ÷ the run's duration: the mean rate. */
  reqPerSec: number;
  total: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50: number;
  p99: number;
  statusCodes: Record<string, number>;
}

export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const headers: Record<string, string> = { authorization: job.authorizations[0]! };
  if (job.body !== undefined) headers['content-type'] = 'application/json';
  const request: Request = { method: job.method, path: job.path, headers, body: job.body };
  if (job.authorizations.length > 1) {
    // One counter for all connections: request n carries token n mod the pool size.
    let n = 0;
    const pool = job.authorizations;
    request.setupRequest = (req) => ({ ...req, headers: { ...req.headers, authorization: pool[n++ % pool.length]! } });
  }
  const options = {
    url: job.url,
    connections: job.connections,
    pipelining: 1,
    duration: job.seconds,
    timeout: 10,
    requests: [request],
  };
  // Off the main thread autocannon takes itself for one of its own workers and returns the
  // raw instance result; aggregating it is the documented way to get the usual figures.
  const raw = await autocannon({ ...options, skipAggregateResult: true });
  const result = autocannon.aggregateResult([raw], options);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  return {
    seconds: result.duration,
    reqPerSec: result.requests.total / result.duration,
    total: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
    statusCodes,
  };
}

// Runs as a child process of the benchmark (bench/load.ts), taking jobs over IPC.
if (process.send) {
  const send = process.send.bind(process);
  process.on('message', async ({ id, job }: { id: number; job: LoadJob }) => {
    try {
      send({ id, result: await runLoad(job) });
    } catch (err) {
      send({ id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  });
  process.on('disconnect', () => process.exit(0));
  send({ ready: true });
}
