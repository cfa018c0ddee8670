import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PACKAGES, type SystemPackage, missingFor, plan, probe } from '../../scripts/system-check.mjs';
import { othersCanReach, tempDirForOtherUsers } from '../support/other-users.js';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/system-check.mjs');
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** What each package puts on a machine, as the probes look for it. */
const FILES: Record<string, string[]> = {
  git: ['/usr/bin/git'],
  bubblewrap: ['/usr/bin/bwrap'],
  'util-linux': ['/usr/sbin/runuser', '/usr/bin/prlimit', '/usr/bin/flock'],
  chromium: ['/usr/bin/chromium'],
  'fonts-dejavu-core': ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'],
  postgresql: ['/usr/lib/postgresql/15/bin/initdb', '/usr/lib/postgresql/15/bin/pg_ctl'],
  'python3-venv': ['/usr/lib/python3/dist-packages/ensurepip/__init__.py'],
  'python3-pip': ['/usr/lib/python3/dist-packages/pip/__init__.py'],
  'python3-pytest': ['/usr/lib/python3/dist-packages/pytest/__init__.py'],
  'build-essential': ['/usr/bin/make', '/usr/bin/g++'],
  faketime: ['/usr/bin/faketime'],
  bsdutils: ['/usr/bin/script'],
  'kubernetes-client': ['/usr/bin/kubectl'],
};
const ALL = Object.keys(FILES);

/**
 * Makes `path` (absolute, inside the fake machine) and the directories above it up to `root`,
 * each 0755 whatever the umask: the not-root case looks at the machine as another user, who
 * must see what is installed (a newcomer's umask may be 077).
 */
function mkdirs(root: string, path: string) {
  if (path === '/' || existsSync(join(root, path))) return;
  mkdirs(root, dirname(path));
  mkdirSync(join(root, path));
  chmodSync(join(root, path), 0o755);
}

/** A file tree standing for a machine with these packages (and, if asked, an apt-get). */
function fakeMachine(installed: string[], aptGet?: 'installs' | 'fails'): string {
  const root = tempDirForOtherUsers('emend-syscheck-', 0o755);
  made.push(root);
  for (const name of installed) {
    for (const file of FILES[name]!) {
      mkdirs(root, dirname(file));
      writeFileSync(join(root, file), '');
      chmodSync(join(root, file), 0o755);
    }
  }
  if (aptGet) {
    mkdirs(root, '/usr/bin');
    // Records how it was called; "installs" the packages by making their files under the fake root.
    const installs = Object.entries(FILES)
      .map(
        ([name, files]) =>
          `    ${name}) for f in ${files.join(' ')}; do mkdir -p "$root$(dirname $f)"; touch "$root$f"; chmod ` +
          `+x "$root$f"; done ;;`,
      )
      .join('\n');
    writeFileSync(
      join(root, 'usr/bin/apt-get'),
      [
        '#!/bin/sh',
        `root=${root}`,
        'echo "$DEBIAN_FRONTEND apt-get $*" >> "$root/apt.log"',
        aptGet === 'fails' ? 'echo "E: Unable to locate package chromium" >&2; exit 100' : '',
        '[ "$1" = install ] || exit 0',
        'for p in "$@"; do',
        '  case "$p" in',
        installs,
        '  esac',
        'done',
      ].join('\n'),
    );
    chmodSync(join(root, 'usr/bin/apt-get'), 0o755);
  }
  return root;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The script and Node where another user can run them. The checkout may sit under a private
 * directory (a clone under /root or `mktemp -d`, mode 0700), and Node too (nvm under /root), so
 * the script is copied byte for byte to a directory anyone can read: it imports nothing but
 * Node's own modules, so the copy runs as the original does. Node is copied only when needed.
 */
function runnableByOthers(): { node: string; script: string; dir: string } {
  const dir = tempDirForOtherUsers('emend-syscheck-script-', 0o755);
  made.push(dir);
  const script = join(dir, 'system-check.mjs');
  copyFileSync(SCRIPT, script);
  chmodSync(script, 0o644);
  if (othersCanReach(process.execPath, 0o001)) return { node: process.execPath, script, dir };
  const node = join(dir, 'node');
  copyFileSync(process.execPath, node);
  chmodSync(node, 0o755);
  return { node, script, dir };
}

/** The real script, as `npm start`/`npm test` run it (as `uid` if given), looking at a fake machine. */
function runCheck(
  purpose: string,
  root: string,
  options: { uid?: number; env?: Record<string, string> } = {},
): Promise<Run> {
  const started = Date.now();
  const other = options.uid !== undefined ? runnableByOthers() : undefined;
  return new Promise((done, fail) => {
    const child = spawn(other?.node ?? process.execPath, [other?.script ?? SCRIPT, purpose], {
      env: { PATH: '/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin', EMEND_SYSCHECK_ROOT: root, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Started in the copy's directory, not the checkout, which the other user may not enter.
      ...(other ? { cwd: other.dir, uid: options.uid, gid: options.uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

const aptLog = (root: string) => readFileSync(join(root, 'apt.log'), 'utf8').trim().split('\n');

describe('the system check before npm start and npm test: deciding', () => {
  it('does nothing when nothing is missing, whoever runs it', () => {
    for (const isRoot of [true, false])
      for (const hasAptGet of [true, false])
        expect(plan({ purpose: 'test', missing: [], isRoot, hasAptGet })).toEqual({ action: 'none' });
  });

  it('installs as root with apt-get, saying so in one line', () => {
    expect(plan({ purpose: 'test', missing: ['bubblewrap', 'chromium'], isRoot: true, hasAptGet: true })).toEqual({
      action: 'install',
      packages: ['bubblewrap', 'chromium'],
      line:
        'npm test: installing missing system packages: bubblewrap chromium (apt-get install -y bubblewrap ' +
        'chromium)',
    });
  });

  it('otherwise stops with the exact command to run', () => {
    const notRoot = plan({ purpose: 'start', missing: ['git', 'util-linux'], isRoot: false, hasAptGet: true });
    expect(notRoot).toMatchObject({ action: 'stop', command: 'sudo apt-get install -y git util-linux' });
    expect(notRoot.action === 'stop' && notRoot.message).toBe(
      'npm start needs system packages that are missing: git util-linux.\nRun this (as root it is done for ' +
        'you), then npm start again:\n  sudo apt-get install -y git util-linux',
    );
    const noApt = plan({ purpose: 'test', missing: ['postgresql'], isRoot: true, hasAptGet: false });
    expect(noApt).toMatchObject({ action: 'stop', command: 'sudo apt-get install -y postgresql' });
    expect(noApt.action === 'stop' && noApt.message).toContain('This machine has no apt-get');
  });

  it('asks npm start for what the service uses and npm test for what the tests use too', () => {
    const nothing = () => false;
    expect(missingFor('start', nothing, {})).toEqual([
      'git',
      'bubblewrap',
      'util-linux',
      'chromium',
      'fonts-dejavu-core',
      'python3-venv',
      'python3-pip',
      'python3-pytest',
      'build-essential',
      'faketime',
    ]);
    expect(missingFor('test', nothing, {})).toEqual([
      'git',
      'bubblewrap',
      'util-linux',
      'chromium',
      'fonts-dejavu-core',
      'python3-venv',
      'python3-pip',
      'python3-pytest',
      'build-essential',
      'faketime',
      'postgresql',
      'bsdutils',
      'kubernetes-client',
    ]);
    // an operator who points EMEND_CHROMIUM_PATH elsewhere does not get Debian's
    expect(missingFor('start', nothing, { EMEND_CHROMIUM_PATH: '/opt/chrome/chrome' })).not.toContain('chromium');
    expect(missingFor('test', () => true, {})).toEqual([]);
  });

  it('looks for each package where Debian puts it, under the root it is given', () => {
    const root = fakeMachine(['git', 'postgresql']);
    const { installed, aptGet } = probe(root, { PATH: '/usr/bin:/bin' });
    const pkg = (name: string) => PACKAGES.find((p) => p.name === name) as SystemPackage;
    expect(installed(pkg('git'))).toBe(true);
    expect(installed(pkg('postgresql'))).toBe(true);
    expect(installed(pkg('bubblewrap'))).toBe(false);
    // util-linux needs all three commands, runuser in sbin: not on this PATH
    expect(installed(pkg('util-linux'))).toBe(false);
    expect(installed(pkg('python3-pytest'))).toBe(false);
    expect(aptGet).toBeUndefined();
  });
});

describe('the system check before npm start and npm test: the script', { timeout: 30_000, concurrent: true }, () => {
  it('is silent and exits 0 when everything is there', async () => {
    for (const purpose of ['start', 'test']) {
      const run = await runCheck(purpose, fakeMachine(ALL));
      expect(run).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
  });

  it('on a machine without the packages and without apt-get, stops with the command and calls nothing', async () => {
    const run = await runCheck('test', fakeMachine([]));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      'npm test needs system packages that are missing: git bubblewrap util-linux chromium fonts-dejavu-core ' +
        'python3-venv python3-pip python3-pytest build-essential faketime postgresql bsdutils kubernetes-client.',
    );
    expect(run.stderr).toContain(
      '\n  sudo apt-get install -y git bubblewrap util-linux chromium fonts-dejavu-core python3-venv python3-pip ' +
        'python3-pytest build-essential faketime postgresql bsdutils kubernetes-client\n',
    );
  });

  it('as root with apt-get, installs only what is missing, in one line, then finds it there', async () => {
    const root = fakeMachine(
      [
        'git',
        'util-linux',
        'chromium',
        'fonts-dejavu-core',
        'build-essential',
        'faketime',
        'postgresql',
        'bsdutils',
        'kubernetes-client',
      ],
      'installs',
    );
    const run = await runCheck('test', root);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toBe(
      'npm test: installing missing system packages: bubblewrap python3-venv python3-pip python3-pytest (apt-get ' +
        'install -y bubblewrap python3-venv python3-pip python3-pytest)\n',
    );
    expect(aptLog(root)).toEqual([
      'noninteractive apt-get update -qq',
      'noninteractive apt-get install -y -qq --no-install-recommends bubblewrap python3-venv python3-pip python3-pytest',
    ]);
    // the second time there is nothing to do
    expect(await runCheck('test', root)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(aptLog(root)).toHaveLength(2);
  });

  it('npm start does not install what only the tests need', async () => {
    const root = fakeMachine(
      ['git', 'util-linux', 'chromium', 'fonts-dejavu-core', 'build-essential', 'faketime'],
      'installs',
    );
    const run = await runCheck('start', root);
    expect(run.code).toBe(0);
    expect(aptLog(root)).toEqual([
      'noninteractive apt-get update -qq',
      'noninteractive apt-get install -y -qq --no-install-recommends bubblewrap python3-venv python3-pip python3-pytest',
    ]);
  });

  it('shows apt-get output and the command when the install fails', async () => {
    const root = fakeMachine(['git', 'bubblewrap', 'util-linux', 'fonts-dejavu-core'], 'fails');
    const run = await runCheck('start', root);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('E: Unable to locate package chromium');
    expect(run.stderr).toContain('install by hand: apt-get install -y chromium');
  });

  it('not as root, stops with the sudo command even where apt-get is there', async () => {
    const root = fakeMachine(
      ['git', 'util-linux', 'chromium', 'fonts-dejavu-core', 'build-essential', 'faketime'],
      'installs',
    );
    const run = await runCheck('start', root, { uid: 65534 });
    expect(run.code).toBe(1);
    // the apt-get was seen (a machine without one gets another sentence), and not run
    expect(run.stderr).toContain('Run this (as root it is done for you), then npm start again:');
    expect(run.stderr).toContain('\n  sudo apt-get install -y bubblewrap python3-venv python3-pip python3-pytest\n');
    expect(() => readFileSync(join(root, 'apt.log'))).toThrow();
  });
});
