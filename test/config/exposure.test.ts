import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { baseUrlIsLocal, isLoopbackHost, listensBeyondLoopback, startupWarnings } from '../../src/config/exposure.js';

// Issue 45, point 4: what the start-up banner warns an operator of (test/cli/startup-banner.test.ts
// shows the banner itself, on a terminal and in a pipe).

const KEY = { OPENAI_API_KEY: 'sk-operator' };

describe('who can reach the server', () => {
  it('tells loopback names and addresses from the rest', () => {
    for (const host of ['localhost', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'emend.example.com', '128.0.0.1'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('listens on loopback by default, with a local base URL', () => {
    const config = loadConfig({});
    expect(listensBeyondLoopback(config)).toBe(false);
    expect(baseUrlIsLocal(config)).toBe(true);
    expect(baseUrlIsLocal(loadConfig({ EMEND_BASE_URL: 'https://emend.example.com' }))).toBe(false);
  });
});

describe('startupWarnings', () => {
  it('warns of a missing model key, and of nothing else on loopback', () => {
    expect(startupWarnings(loadConfig({}))).toEqual([expect.stringContaining('no model provider key is set')]);
    expect(startupWarnings(loadConfig(KEY))).toEqual([]);
  });

  it('beyond loopback with demos on and a managed key: warns that anyone can spend the key, and of localhost links', () => {
    const warnings = startupWarnings(loadConfig({ ...KEY, HOST: '0.0.0.0' }));
    expect(warnings).toEqual([
      expect.stringMatching(/listening on 0\.0\.0\.0.*demo tokens on.*EMEND_DEMO_TOKENS=off/),
      expect.stringMatching(/EMEND_BASE_URL is http:\/\/localhost:3000 while listening on 0\.0\.0\.0/),
    ]);
  });

  it('says neither once demos are off and the base URL is public', () => {
    const config = loadConfig({
      ...KEY,
      HOST: '0.0.0.0',
      EMEND_DEMO_TOKENS: 'off',
      EMEND_BASE_URL: 'https://emend.example.com',
    });
    expect(startupWarnings(config)).toEqual([]);
    // No managed key: demos spend nothing of the operator's, so only the missing key is said.
    expect(startupWarnings(loadConfig({ HOST: '0.0.0.0', EMEND_BASE_URL: 'https://emend.example.com' }))).toEqual([
      expect.stringContaining('no model provider key is set'),
    ]);
  });
});
