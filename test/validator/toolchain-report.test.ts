import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startHarness } from '../support/harness.js';

// /health lists the toolchains found inside the sandbox, probed once (a few seconds: Java and Maven
// start a JVM each), so on one database only.
describe('/health lists the toolchains in the sandbox', { timeout: 60_000 }, () => {
  it('names python, node and their versions as the sandbox sees them, and leaves out what is not there', async () => {
    const h = await startHarness();
    try {
      await h.deps.toolchains.start();
      const res = await h.app.inject({ method: 'GET', url: '/health' });
      expect(res.statusCode).toBe(200);
      const { toolchains } = res.json();
      // the sandbox's python is /usr/bin/python3 (not whatever the host's PATH finds first)
      const python = execFileSync('/usr/bin/python3', ['-c', 'import platform; print(platform.python_version())'], {
        encoding: 'utf8',
      }).trim();
      expect(toolchains).toMatchObject({
        python,
        venv: 'yes',
        node: execFileSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim(),
      });
      expect(toolchains.pytest).toMatch(/^\d+\.\d+/);
      if (!existsSync('/usr/bin/go')) expect(toolchains.go).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});
