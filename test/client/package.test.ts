import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const PACKAGE = join(ROOT, 'packages/client');

interface Manifest {
  exports: { '.': Record<string, string> };
  main: string;
  types: string;
}

// The package as it is installed and run: built by its own build script (the root `npm run build`
// runs it), loaded by plain Node with no TypeScript loader, through the files its manifest names.
describe('@emend/client: the package', { timeout: 120_000 }, () => {
  it('builds to dist, which plain Node loads through the manifest, with every declaration it refers to', async () => {
    await run('npm', ['run', 'build', '--workspace', '@emend/client'], { cwd: ROOT });
    const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as Manifest;
    const entry = manifest.exports['.'];
    expect(Object.keys(entry)).toEqual(['emend-source', 'types', 'default']);
    expect(existsSync(join(PACKAGE, entry['emend-source']!))).toBe(true);
    expect(manifest.main).toBe(entry.default);
    expect(manifest.types).toBe(entry.types);

    const script =
      'const m = await import(process.argv[1]); const c = m.createClient({ baseUrl: "http://x" });' +
      'console.log(JSON.stringify({ keys: Object.keys(c).sort(), error: new m.NotFoundError({ status: 404,' +
      ' code: "not_found", message: "m" }) instanceof m.EmendError }));';
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      script,
      join(PACKAGE, entry.default!),
    ]);
    expect(JSON.parse(stdout)).toEqual({
      keys: [
        'DELETE',
        'GET',
        'PATCH',
        'POST',
        'PUT',
        'acceptInvitation',
        'createInvitation',
        'createTask',
        'createToken',
        'createWorkspace',
        'deleteWorkspace',
        'exportWorkspace',
        'followTask',
        'getSpendLimits',
        'getTask',
        'getWorkspace',
        'leaveWorkspace',
        'listAudit',
        'listInvitations',
        'listMembers',
        'listTasks',
        'listWorkspaces',
        'raw',
        'removeMember',
        'renameWorkspace',
        'revokeInvitation',
        'setMemberRole',
        'setSpendLimits',
        'transferWorkspace',
      ],
      error: true,
    });

    // Each relative import of each declaration file names a declaration that is there (schema.d.ts is copied).
    const dist = dirname(join(PACKAGE, entry.types!));
    const refs: string[] = [];
    for (const file of readdirSync(dist).filter((f) => f.endsWith('.d.ts'))) {
      const text = readFileSync(join(dist, file), 'utf8');
      for (const [, spec] of text.matchAll(/from '(\.\/[^']+)\.js'/g)) {
        refs.push(`${file} → ${spec}`);
        expect(existsSync(join(dist, `${spec}.d.ts`)), `${file} → ${spec}`).toBe(true);
      }
    }
    expect(refs).toContain('types.d.ts → ./schema');
    expect(readdirSync(dist)).toContain('schema.d.ts');
  });
});
