import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import addFormats from 'ajv-formats';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ERROR_CODES } from '../../src/errors.js';

// The committed OpenAPI document is strict enough for a generated client to be typed: Redocly's
// recommended rules plus ours (redocly.yaml) find nothing, and the checks below hold on it.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FILE = 'openapi/openapi-public.yaml';

type Schema = Record<string, unknown> & {
  properties?: Record<string, Schema>;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  $ref?: string;
};
interface Media {
  schema?: Schema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Response {
  description: string;
  headers?: Record<string, { schema: Schema }>;
  content?: Record<string, Media>;
}
interface Operation {
  operationId?: string;
  security?: unknown[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, Response>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
  security?: unknown[];
}

const doc = parse(readFileSync(`${ROOT}${FILE}`, 'utf8')) as Doc;
const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
);
const schemas = doc.components.schemas;

/** Every sub-schema of a value, with where it is. */
function* subSchemas(value: unknown, at: string): Generator<[string, Schema]> {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) yield* subSchemas(v, `${at}/${i}`);
    return;
  }
  if (!value || typeof value !== 'object') return;
  yield [at, value as Schema];
  for (const [k, v] of Object.entries(value)) yield* subSchemas(v, `${at}/${k}`);
}

describe('the committed OpenAPI document, linted', () => {
  it('has no problem under Redocly CLI (recommended rules and redocly.yaml)', async () => {
    const bin = `${ROOT}node_modules/.bin/redocly`;
    const run = await promisify(execFile)(bin, ['lint', FILE, '--format=json'], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    const report = JSON.parse(run.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 120_000);
});

describe('the committed OpenAPI document, strict', () => {
  it('writes every closed vocabulary as one enum, never an anyOf or oneOf of constants', () => {
    const constOnly = (branches: Schema[]) => branches.every((b) => 'const' in b || (b.enum && !b.properties));
    const found = [...subSchemas(doc, '#')]
      .filter(([, s]) => [s.anyOf, s.oneOf].some((b) => Array.isArray(b) && constOnly(b)))
      .map(([at]) => at);
    expect(found).toEqual([]);
    expect(schemas.Log!.properties!.step!.enum).toEqual(
      expect.arrayContaining(['planner', 'locator', 'inspector', 'fixer', 'validator', 'pr']),
    );
    expect(schemas.Log!.properties!.status!.enum).toEqual(['running', 'done', 'failed', 'skipped']);
    expect(schemas.TaskSummary!.properties!.status!.enum).toHaveLength(7);
  });

  it('gives ids, URLs, times and emails their formats, and counts their bounds', () => {
    const task = schemas.Task!.properties!;
    const formatOf = (s: Schema | undefined) =>
      (s?.format as string | undefined) ?? (s?.anyOf?.find((b) => b.type !== 'null')?.format as string | undefined);
    expect(formatOf(task.id)).toBe('uuid');
    expect(formatOf(task.parent_id)).toBe('uuid');
    for (const url of ['repo_url', 'pr_url', 'deployed_url', 'deployed_repo'])
      expect(formatOf(task[url]), url).toBe('uri');
    for (const time of ['created_at', 'started_at', 'finished_at', 'pr_merged_at'])
      expect(formatOf(task[time]), time).toBe('date-time');
    expect(task.retry_count).toMatchObject({ type: 'integer', minimum: 0, maximum: 2 });
    expect(task.cost_usd).toMatchObject({ minimum: 0 });
    expect(formatOf(schemas.Profile!.properties!.email)).toBe('email');
    expect(formatOf(schemas.ProviderKey!.properties!.base_url)).toBe('uri');
    expect(formatOf(schemas.Error!.properties!.request_id)).toBe('uuid');
    const create = doc.paths['/v1/tasks']!.post!.requestBody!.content['application/json']!.schema!;
    expect(formatOf(create.properties!.repo_url)).toBe('uri');
    expect(create.properties!.prompt).toMatchObject({ minLength: 3, maxLength: 2000 });
  });

  it('lists required fields', () => {
    expect(schemas.Task!.required).toEqual(expect.arrayContaining(['id', 'status', 'mode', 'task_type', 'created_at']));
    expect(schemas.Error!.required).toEqual(['error', 'message', 'request_id']);
    expect(schemas.Profile!.required).toEqual(expect.arrayContaining(['scm', 'scm_hosts']));
    // The brand key is the default host's (github, gitlab or gitea): each is described, none required.
    for (const brand of ['github', 'gitlab', 'gitea'])
      expect(Object.keys(schemas.Profile!.properties!), brand).toContain(brand);
  });

  const PROBES = new Set(['GET /v1/health', 'GET /v1/ready']);

  it('has one Error schema whose code is the enum of every code, used by every error answer', () => {
    expect(schemas.Error!.properties!.error!.enum).toEqual([...ERROR_CODES]);
    for (const { name, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        // The probes answer 503 with their own bodies: /health reports the database, /ready why the
        // node takes no traffic (draining, database unreachable); neither is a refused request.
        if (PROBES.has(name)) continue;
        expect(response.content?.['application/json']?.schema, `${name} ${status}`).toEqual({
          $ref: '#/components/schemas/Error',
        });
      }
    }
  });

  it('names an operationId per operation, describes every answer, and declares Retry-After on every 429', () => {
    const ids = operations.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { name, op } of operations) {
      const statuses = Object.keys(op.responses).map(Number);
      expect(
        statuses.some((s) => s >= 200 && s < 400),
        `${name} has a success or redirect answer`,
      ).toBe(true);
      const needsToken = (op.security ?? doc.security ?? []).length > 0;
      if (needsToken) expect(statuses, `${name} needs a token`).toContain(401);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${name} ${status}`).not.toBe('Default Response');
        // The probes' 503 is their report (the database is down, the node drains), not a refusal to retry.
        if (status === '429' || (status === '503' && !PROBES.has(name))) {
          expect(response.headers?.['Retry-After']?.schema, `${name} ${status}`).toMatchObject({ type: 'integer' });
        }
      }
    }
    expect(operations.filter(({ op }) => '429' in op.responses).length).toBeGreaterThanOrEqual(3);
  });

  it('describes the task log stream: text/event-stream, its events and their data, with an example', () => {
    const ok = doc.paths['/v1/tasks/{id}/logs/stream']!.get!.responses['200']!;
    const stream = ok.content!['text/event-stream']!;
    expect(stream.schema).toMatchObject({ type: 'string' });
    const example = String(stream.example);
    const events = [...example.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events).toEqual(['connected', 'log', 'log', 'state', 'end']);
    // Each event's data parses, and a log's and a state's match their published schemas.
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    const blocks = example.split('\n\n').filter(Boolean);
    for (const block of blocks) {
      const event = /^event: (\w+)$/m.exec(block)![1];
      const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!);
      const schema = { log: schemas.TaskLogEvent, state: schemas.TaskStateEvent }[event as 'log' | 'state'];
      if (schema) expect(ajv.validate(schema, data), `${event}: ${ajv.errorsText()}`).toBe(true);
    }
    const description = (doc.paths['/v1/tasks/{id}/logs/stream']!.get as unknown as { description: string })
      .description;
    for (const name of ['connected', 'log', 'state', 'end', 'Last-Event-ID']) expect(description).toContain(name);
  });

  it('shows a request example for every body, and every example is valid against its schema', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    let checked = 0;
    for (const { name, op } of operations) {
      const media = op.requestBody?.content['application/json'];
      if (!media) continue;
      const examples = [
        ...(media.example === undefined ? [] : [media.example]),
        ...Object.values(media.examples ?? {}).map((e) => e.value),
      ];
      expect(examples.length, `${name} has a request example`).toBeGreaterThan(0);
      const validate = ajv.compile(media.schema!);
      for (const example of examples) {
        expect(validate(example), `${name}: ${JSON.stringify(example)}: ${ajv.errorsText(validate.errors)}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(12);
  });
});
