import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Editor } from '../../../../src/steps/fix/agent/editor.js';

// The agent's editor on a real directory with real links: `create` refuses a path for what it is.
let root: string;
let checkout: string;
let outside: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'emend-agent-editor-'));
  checkout = join(root, 'checkout');
  outside = join(root, 'outside');
  mkdirSync(join(checkout, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(checkout, 'src/app.js'), 'exports.x = 1;\n');
  symlinkSync(outside, join(checkout, 'out'));
  symlinkSync('nowhere', join(checkout, 'dangling'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the agent editor’s create', () => {
  it('through a link to a directory outside the checkout: refused naming the link, nothing written', async () => {
    const editor = new Editor(checkout, 5);
    const done = await editor.run({ command: 'create', path: 'out/new.js', text: 'x\n' });
    expect(done.ok).toBe(false);
    expect(done.observation).toBe(
      `out/new.js: out is a symlink -> ${outside}, which leads outside the repository; it is not followed`,
    );
    expect(done.observation).not.toContain('exists already');
    expect(existsSync(join(outside, 'new.js'))).toBe(false);
    expect(editor.touched.size).toBe(0);
  });

  it('on a dangling link or a directory: refused as such; on a file: exists already; a new file: created', async () => {
    const editor = new Editor(checkout, 5);
    const dangling = await editor.run({ command: 'create', path: 'dangling', text: 'x\n' });
    expect(dangling).toEqual({ ok: false, observation: 'dangling: dangling is a symlink to a missing target' });
    expect(existsSync(join(checkout, 'nowhere'))).toBe(false);
    const dir = await editor.run({ command: 'create', path: 'src', text: 'x\n' });
    expect(dir).toEqual({ ok: false, observation: 'src: src is a directory, not a regular file' });
    const file = await editor.run({ command: 'create', path: 'src/app.js', text: 'x\n' });
    expect(file).toEqual({
      ok: false,
      observation: 'src/app.js exists already: view it and replace a passage instead',
    });
    const made = await editor.run({ command: 'create', path: 'src/new.js', text: 'y\n' });
    expect(made).toEqual({ ok: true, observation: 'src/new.js: created' });
  });
});
