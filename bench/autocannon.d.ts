// The subset of autocannon 8's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called before each request is sent; returns the request to send. */
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request | undefined;
  }

  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: Request[];
    /** Return the raw per-instance result, for aggregateResult. */
    skipAggregateResult?: boolean;
  }

  /** What an instance returns when skipAggregateResult is set (or when it runs off the main thread). */
  export type RawResult = object;

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { sent: number };
    throughput: Histogram;
  }

  function autocannon(options: Options): Promise<Result | RawResult>;
  namespace autocannon {
    function aggregateResult(results: RawResult[], options: Options): Result;
  }
  export default autocannon;
}
