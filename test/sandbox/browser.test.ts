import { afterAll, describe, expect, it } from 'vitest';
import { clockEnv, findFaketime } from '../../src/test-runs/test-clock.js';
import { newDir, realSandbox, removeDirs } from './helpers.js';

// The sandbox's browser (docs/environments.md, "Browsers"), in the real bubblewrap sandbox:
// the host's Chromium started through the script the sandbox provides, with no flag of the
// caller's, and what Chromium needs there.

/** Chromium's own limits: the helpers' small ones are too small for a browser. */
const ROOMY = {
  EMEND_SANDBOX_TIMEOUT_S: '60',
  EMEND_SANDBOX_CPU_S: '60',
  EMEND_SANDBOX_MEMORY_MB: '2048',
  EMEND_SANDBOX_PROCESSES: '512',
  EMEND_SANDBOX_FILE_SIZE_MB: '1024',
  EMEND_SANDBOX_OPEN_FILES: '4096',
};

describe('the sandbox’s browser', { timeout: 60_000 }, () => {
  afterAll(removeDirs);

  it('has a writable /dev/shm of its own and starts the host’s Chromium headless, with no flag of the caller’s', async () => {
    const { sandbox } = await realSandbox(ROOMY);
    const browser = sandbox.report().browser;
    expect(browser).toBe('/opt/emend/chromium');
    const r = await sandbox.run({
      command: [
        'sh',
        '-c',
        'stat -c %a /dev/shm && echo x > /dev/shm/emend && cat /dev/shm/emend && ' +
          `"$CHROME_BIN" --user-data-dir=/tmp/profile --dump-dom 'data:text/html,<p id="x">from the sandbox</p>' 2>/dev/null`,
      ],
      workdir: newDir(),
      env: { CHROME_BIN: browser! },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^1777\nx\n/);
    expect(r.stdout).toContain('<p id="x">from the sandbox</p>');
  });

  it('starts under the eval’s clock (libfaketime, which Chromium does not start under) at the real time, while the command runs at the commit’s date', async () => {
    const { sandbox } = await realSandbox(ROOMY);
    const faketime = findFaketime();
    expect(faketime, 'libfaketime (the faketime package) is installed by the system check').toBeDefined();
    const r = await sandbox.run({
      command: [
        'sh',
        '-c',
        'date -u +%Y && timeout 40 "$CHROME_BIN" --user-data-dir=/tmp/profile --dump-dom ' +
          `'data:text/html,<script>document.write("year " + new Date().getUTCFullYear())</script>' 2>/dev/null`,
      ],
      workdir: newDir(),
      env: {
        CHROME_BIN: sandbox.report().browser!,
        ...clockEnv(faketime!, new Date('2019-08-13T12:00:00Z'), new Date()),
      },
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^2019\n/);
    expect(r.stdout).toContain(`year ${new Date().getUTCFullYear()}`);
  });

  it('has no browser where the configured Chromium is not there', async () => {
    const { sandbox } = await realSandbox(ROOMY, { browserPath: '/nonexistent/chromium' });
    expect(sandbox.report().browser).toBeUndefined();
    const r = await sandbox.run({
      command: ['sh', '-c', 'test -e /opt/emend/chromium || echo none'],
      workdir: newDir(),
    });
    expect(r.stdout.trim()).toBe('none');
  });
});
