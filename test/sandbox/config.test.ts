import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/error.js';
import { loadConfig } from '../../src/config/config.js';
import { newDir, removeDirs } from './helpers.js';

function variableOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).variable;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('sandbox configuration', () => {
  afterAll(removeDirs);

  it('defaults to bubblewrap, setup through the egress proxy, and moderate limits', () => {
    expect(loadConfig({}).sandbox).toEqual({
      mode: 'bubblewrap',
      setupNetwork: 'proxy',
      setupNetworkDeprecatedOn: false,
      setupAllow: [],
      toolRoots: [],
      limits: {
        timeoutMs: 600_000,
        cpuSeconds: 600,
        memoryBytes: 2048 * 1024 * 1024,
        maxProcesses: 512,
        fileSizeBytes: 1024 * 1024 * 1024,
        openFiles: 4096,
        outputBytes: 256 * 1024,
      },
    });
  });

  it('reads every variable', () => {
    const tools = newDir();
    const config = loadConfig({
      EMEND_DATA_DIR: newDir(),
      EMEND_SANDBOX: 'unsafe-host',
      EMEND_SANDBOX_SETUP_NETWORK: 'on',
      EMEND_SANDBOX_TOOL_ROOTS: `${tools}:/usr/lib`,
      EMEND_SANDBOX_TIMEOUT_S: '30',
      EMEND_SANDBOX_CPU_S: '20',
      EMEND_SANDBOX_MEMORY_MB: '256',
      EMEND_SANDBOX_PROCESSES: '100',
      EMEND_SANDBOX_FILE_SIZE_MB: '10',
      EMEND_SANDBOX_OPEN_FILES: '128',
      EMEND_SANDBOX_OUTPUT_KB: '32',
    });
    expect(config.sandbox).toMatchObject({
      mode: 'unsafe-host',
      // `on`, the old spelling, is `host`, and start-up says it is deprecated
      setupNetwork: 'host',
      setupNetworkDeprecatedOn: true,
      setupAllow: [],
      toolRoots: [tools, '/usr/lib'],
      limits: {
        timeoutMs: 30_000,
        cpuSeconds: 20,
        memoryBytes: 256 * 1024 * 1024,
        maxProcesses: 100,
        fileSizeBytes: 10 * 1024 * 1024,
        openFiles: 128,
        outputBytes: 32 * 1024,
      },
    });
  });

  it('names the variable it cannot accept', () => {
    expect(variableOf({ EMEND_SANDBOX: 'docker' })).toBe('EMEND_SANDBOX');
    expect(variableOf({ EMEND_SANDBOX_SETUP_NETWORK: 'yes' })).toBe('EMEND_SANDBOX_SETUP_NETWORK');
    // a private or loopback destination of setup needs its port; ranges are not taken
    for (const entry of ['127.0.0.1', '10.0.0.0/8', '[::1]', 'bad host!'])
      expect(variableOf({ EMEND_SETUP_ALLOW: entry })).toBe('EMEND_SETUP_ALLOW');
    for (const name of [
      'EMEND_SANDBOX_TIMEOUT_S',
      'EMEND_SANDBOX_CPU_S',
      'EMEND_SANDBOX_MEMORY_MB',
      'EMEND_SANDBOX_PROCESSES',
      'EMEND_SANDBOX_FILE_SIZE_MB',
      'EMEND_SANDBOX_OPEN_FILES',
      'EMEND_SANDBOX_OUTPUT_KB',
    ]) {
      expect(variableOf({ [name]: 'lots' })).toBe(name);
      expect(variableOf({ [name]: '0' })).toBe(name);
    }
  });

  it('refuses tool roots that are relative, missing, or would show the data dir', () => {
    const dataDir = `${newDir()}/data`;
    expect(variableOf({ EMEND_SANDBOX_TOOL_ROOTS: 'opt/tools' })).toBe('EMEND_SANDBOX_TOOL_ROOTS');
    expect(variableOf({ EMEND_SANDBOX_TOOL_ROOTS: '/nonexistent/tools' })).toBe('EMEND_SANDBOX_TOOL_ROOTS');
    expect(() => loadConfig({ EMEND_DATA_DIR: dataDir, EMEND_SANDBOX_TOOL_ROOTS: '/' })).toThrow(
      /contains the data dir/,
    );
    expect(() =>
      loadConfig({ EMEND_DATA_DIR: dataDir, EMEND_SANDBOX_TOOL_ROOTS: `/usr:${dataDir.replace(/\/data$/, '')}` }),
    ).toThrow(/contains the data dir/);
  });
});
