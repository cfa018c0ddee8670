import addFormats from 'ajv-formats';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// The prompt's 3–2000 limit is counted one way: in code points, as JSON Schema's minLength and
// maxLength count, on the string as sent. The published schema and the service agree on every
// prompt below: what one accepts the other accepts.
let h: Harness;
let auth: Record<string, string>;
let published: (body: unknown) => boolean;
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
  // A plan with room for every create below.
  ({ auth } = await newAccount(h, { plan: 'scale', credits: 100 }));
  const doc = h.app.swagger() as unknown as {
    paths: Record<string, { post: { requestBody: { content: Record<string, { schema: object }> } } }>;
  };
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  published = ajv.compile(doc.paths['/v1/tasks']!.post.requestBody.content['application/json']!.schema);
});
afterAll(() => h.close());

const ASTRAL = '😀'; // one code point, two UTF-16 units
const REPO = 'https://github.com/psf/requests';

const CASES: [label: string, prompt: string, accepted: boolean][] = [
  ['2000 astral code points (4000 UTF-16 units)', ASTRAL.repeat(2000), true],
  ['2001 astral code points', ASTRAL.repeat(2001), false],
  ['3 astral code points', ASTRAL.repeat(3), true],
  ['2 astral code points', ASTRAL.repeat(2), false],
  ['2000 ASCII characters', 'x'.repeat(2000), true],
  ['2000 characters and a trailing newline (2001 as sent)', `${'x'.repeat(2000)}\n`, false],
  ['3 characters in surrounding spaces', '  abc  ', true],
  ['"a b" in spaces: 3 once trimmed', ' a b ', true],
  ['one character in spaces (7 as sent, 1 once trimmed)', '   a   ', false],
  ['two astral characters in spaces', ` ${ASTRAL}${ASTRAL} `, false],
  ['only whitespace', '\n\t     \n', false],
];

describe('the prompt length, counted one way', () => {
  it.each(CASES)('%s: the published schema and the service agree', async (_label, prompt, accepted) => {
    const body = { prompt, repo_url: REPO };
    expect(published(body)).toBe(accepted);
    const res = await h.app.inject({ method: 'POST', url: '/v1/tasks', headers: auth, payload: body });
    if (!accepted) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ error: 'bad_request', message: expect.stringMatching(/^prompt: /) });
      return;
    }
    expect(res.statusCode, res.body).toBe(201);
    // Stored trimmed: that is what the model and the pull request see.
    const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, res.json().id));
    expect(row!.prompt).toBe(prompt.trim());
    await h.deps.db.update(tasks).set({ status: 'cancelled' }).where(eq(tasks.id, row!.id));
  });

  it('says the rule in words when only the trimmed length is short', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: auth,
      payload: { prompt: '   a   ', repo_url: REPO },
    });
    expect(res.json().message).toMatch(/code points.*trimmed/);
  });
});
