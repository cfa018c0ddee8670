import { describe, expect, it } from 'vitest';
import { failedDependencyScript, takesIgnoreScripts } from '../../src/environments/dependency-scripts.js';
import { refusedSummary } from '../../src/environments/setup-refusals.js';

// The package managers' own words, as they printed them on this machine (npm 11.19, yarn 1.22.22,
// pnpm 9.15.9) for a dependency whose postinstall exits 1, and for the root's own failing script.
const NPM = `npm error code 1
npm error path /workspace/repo/node_modules/bad-dl
npm error command failed
npm error command sh -c node -e "console.error('downloading chromium... failed'); process.exit(1)"
npm error downloading chromium... failed
npm error A complete log of this run can be found in: /workspace/home/.npm/_logs/2026-11-29T02_13_02_559Z-debug-0.log`;

const NPM_8 = `npm ERR! code 1
npm ERR! path /workspace/repo/node_modules/@scope/driver
npm ERR! command failed
npm ERR! command sh -c node install.js`;

const YARN = `[4/4] Building fresh packages...
error /workspace/repo/node_modules/bad-dl: Command failed.
Exit code: 1
Command: node -e "console.error('downloading chromium... failed'); process.exit(1)"
Arguments: 
Directory: /workspace/repo/node_modules/bad-dl
Output:
downloading chromium... failed
info Visit https://yarnpkg.com/en/docs/cli/install for documentation about this command.`;

const PNPM = `Progress: resolved 1, reused 0, downloaded 1, added 1, done
.../node_modules/bad-dl postinstall$ node -e "console.error('downloading chromium... failed'); process.exit(1)"
.../node_modules/bad-dl postinstall: downloading chromium... failed
.../node_modules/bad-dl postinstall: Failed
 ELIFECYCLE  Command failed with exit code 1.`;

const NPM_ROOT = `npm error code 1
npm error path /workspace/repo
npm error command failed
npm error command sh -c node download.js`;

describe("a dependency's failed install script, from the package managers' words", () => {
  it('names the package and what it ran', () => {
    expect(failedDependencyScript(NPM)).toEqual({
      pkg: 'bad-dl',
      detail: `node -e "console.error('downloading chromium... failed'); process.exit(1)"`,
    });
    expect(failedDependencyScript(NPM_8)).toEqual({ pkg: '@scope/driver', detail: 'node install.js' });
    expect(failedDependencyScript(YARN)?.pkg).toBe('bad-dl');
    expect(failedDependencyScript(PNPM)).toEqual({ pkg: 'bad-dl', detail: 'postinstall' });
  });

  it("reads npm 6's words by the package's name, a dependency's only where it is not the root's", () => {
    const npm6 = (pkg: string) =>
      `npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! ${pkg}@2.1.16 install: \`node install.js\`\nnpm ERR! Exit status 1\nnpm ERR!\nnpm ERR! Failed at the ${pkg}@2.1.16 install script.\nnpm ERR! This is probably not a problem with npm. There is likely additional logging output above.`;
    expect(failedDependencyScript(npm6('phantomjs-prebuilt'), 'bpmn-js')).toEqual({
      pkg: 'phantomjs-prebuilt',
      detail: 'install',
    });
    expect(failedDependencyScript(npm6('@scope/driver'), 'app')?.pkg).toBe('@scope/driver');
    // the root's own install script, and a root without a name read: not a dependency's
    expect(failedDependencyScript(npm6('bpmn-js'), 'bpmn-js')).toBeUndefined();
    expect(failedDependencyScript(npm6('phantomjs-prebuilt'))).toBeUndefined();
  });

  it("is not the root's own script, nor any other failure", () => {
    expect(failedDependencyScript(NPM_ROOT)).toBeUndefined();
    expect(failedDependencyScript('npm error code ETARGET\nnpm error notarget No matching version')).toBeUndefined();
    expect(
      failedDependencyScript(
        'error An unexpected error occurred: "https://registry.yarnpkg.com/x: tunneling socket could not be established"',
      ),
    ).toBeUndefined();
  });

  it('retries only installs that take --ignore-scripts, and only once', () => {
    expect(takesIgnoreScripts('npm ci --no-audit --no-fund')).toBe(true);
    expect(takesIgnoreScripts('yarn install --frozen-lockfile')).toBe(true);
    expect(takesIgnoreScripts('pnpm install --frozen-lockfile')).toBe(true);
    expect(takesIgnoreScripts('yarn install --immutable')).toBe(false);
    expect(takesIgnoreScripts('npm ci --no-audit --ignore-scripts')).toBe(false);
  });
});

describe("a failed setup's refusals", () => {
  const refused = (n: number) => ({
    host: `h${n}.example`,
    port: 443,
    allowed: false,
    reason: 'not listed',
    requests: 1,
    bytes_out: 0,
    bytes_in: 0,
  });
  it('names at most five and counts the rest; nothing when none was refused', () => {
    expect(refusedSummary([])).toBeUndefined();
    expect(refusedSummary([{ ...refused(0), allowed: true }])).toBeUndefined();
    expect(refusedSummary([0, 1, 2, 3, 4, 5, 6].map(refused))).toBe(
      'refused: h0.example:443 (not listed), h1.example:443 (not listed), h2.example:443 (not listed), h3.example:443 (not listed), h4.example:443 (not listed), and 2 more',
    );
  });
});
