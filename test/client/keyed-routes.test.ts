import { readFileSync } from 'node:fs';
import { KEYED_ROUTES } from '@emend/client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Operation {
  parameters?: { in: string; name: string }[];
}

describe('@emend/client: the routes it sends an Idempotency-Key to', () => {
  it('are exactly the POSTs whose operation in the committed document takes the header', () => {
    const doc = parse(readFileSync(new URL('../../openapi/openapi-public.yaml', import.meta.url), 'utf8')) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const keyed = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => op.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'))
        .map(([method]) => `${method} ${path}`),
    );
    expect(keyed.length).toBeGreaterThan(0);
    expect(keyed.sort()).toEqual(KEYED_ROUTES.map((p) => `post ${p}`).sort());
  });
});
