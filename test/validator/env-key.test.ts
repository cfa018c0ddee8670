import { describe, expect, it } from 'vitest';
import { environmentKey } from '../../src/environments/env-key.js';

const parts = {
  workspace: 'team-a',
  repository: 'https://git.example/fixture',
  manifests: 'abc',
  setup: ['npm ci', ''],
  settings: { testCommand: 'npm test' },
  setupEnv: { TOKEN: 's3cret' },
  toolchains: { node: '22.1.0', python: undefined },
  toolRoots: ['/opt/node'],
  sandbox: 'bubblewrap setup-network:true',
};

describe('environmentKey', () => {
  it('is the key entries already on disk were stored under (the workspace hashed as `account`)', () => {
    // Computed by the code before EnvKeyParts.account became workspace: a changed key would make
    // every cached environment a miss after an upgrade.
    expect(environmentKey(Buffer.from('cache-secret'), parts)).toBe('b5f01da00c8f825d564c322037c91296b3ee86b3');
  });

  it('differs per workspace', () => {
    const secret = Buffer.from('cache-secret');
    expect(environmentKey(secret, { ...parts, workspace: 'team-b' })).not.toBe(environmentKey(secret, parts));
  });
});
