import { spawnSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { need, requirements } from '../support/requirements.js';
import { newDir, processesWith, realSandbox, removeDirs, uniqueSeconds } from './helpers.js';

const { sandbox } = await realSandbox();
const report = sandbox.report();

/** Waits for a file the command writes once it is under way (not a guess at how long it takes). */
async function until(path: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await sleep(10);
  }
}

/**
 * A command that ignores SIGTERM and leaves children behind in every way a shell can: in
 * its process group, in a session of their own (setsid), and orphaned by a double fork.
 */
function stubbornScript(workdir: string, seconds: number) {
  const script = join(workdir, `stubborn-${seconds}.sh`);
  writeFileSync(
    script,
    [
      "trap '' TERM",
      `sleep ${seconds} &`,
      `setsid sleep ${seconds} &`,
      `(sleep ${seconds} &) &`,
      `sh -c "trap '' TERM; sleep ${seconds}" &`,
      'sleep 0.2; touch /workspace/ready',
      'wait',
    ].join('\n'),
  );
  return ['sh', `/workspace/stubborn-${seconds}.sh`];
}

describe('limits of one command', () => {
  const workdir = newDir();
  afterAll(removeDirs);

  it('reports what is in force on this host', () => {
    expect(report).toMatchObject({
      kind: 'bubblewrap',
      limits: {
        timeoutMs: 20_000,
        cpuSeconds: 10,
        memoryBytes: 128 * 1024 * 1024,
        maxProcesses: 64,
        fileSizeBytes: 1024 * 1024,
        openFiles: 64,
        outputBytes: 64 * 1024,
      },
    });
    expect(['v1', 'v2', 'none']).toContain(report.cgroups);
    console.log(
      `sandbox on this host: bubblewrap ${report.version}, cgroups ${report.cgroups}, memory ` +
        `limit ${report.memoryLimit}, process limit ${report.processLimit}`,
    );
  });

  it('kills a command that ignores SIGTERM, with all its children, when the caller aborts', async () => {
    const seconds = uniqueSeconds();
    const abort = new AbortController();
    const ready = join(workdir, 'ready');
    const running = sandbox.run({ command: stubbornScript(workdir, seconds), workdir, signal: abort.signal });
    await until(ready);
    // four sleeps (and the sh -c holding one)
    expect(processesWith(`sleep ${seconds}`).length).toBeGreaterThanOrEqual(4);
    const started = Date.now();
    abort.abort();
    const result = await running;
    expect(result).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGKILL' });
    expect(Date.now() - started).toBeLessThan(2_000);
    // resolved only once all of it was gone
    expect(processesWith(`${seconds}`)).toEqual([]);
  });

  it('kills it the same way on timeout', async () => {
    const seconds = uniqueSeconds();
    const result = await sandbox.run({
      command: stubbornScript(workdir, seconds),
      workdir,
      limits: { timeoutMs: 1_000 },
    });
    expect(result).toMatchObject({ timedOut: true, aborted: false, signal: 'SIGKILL' });
    expect(result.durationMs).toBeLessThan(4_000);
    expect(processesWith(`${seconds}`)).toEqual([]);
  });

  it('kills the whole tree even where the host has no cgroups', async () => {
    const { sandbox: plain } = await realSandbox({}, { cgroups: false });
    expect(plain.report()).toMatchObject({
      kind: 'bubblewrap',
      cgroups: 'none',
      memoryLimit: false,
      processLimit: false,
    });
    const seconds = uniqueSeconds();
    const result = await plain.run({
      command: stubbornScript(workdir, seconds),
      workdir,
      limits: { timeoutMs: 1_000 },
    });
    expect(result.timedOut).toBe(true);
    expect(processesWith(`${seconds}`)).toEqual([]);
  });

  it('ends whatever a command left running in the background when it exits', async () => {
    const seconds = uniqueSeconds();
    const result = await sandbox.run({
      command: [
        'sh',
        '-c',
        `setsid sleep ${seconds} > /dev/null 2>&1 & sleep ${seconds} > /dev/null 2>&1 & echo started`,
      ],
      workdir,
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'started\n' });
    expect(result.durationMs).toBeLessThan(5_000);
    expect(processesWith(`sleep ${seconds}`)).toEqual([]);
  });

  it('contains a fork bomb: the command ends, nothing is left, the host is fine', async (ctx) => {
    need(ctx, requirements.sandboxLimit(report, 'processes'));
    const marker = `bomb-${uniqueSeconds()}.sh`;
    writeFileSync(
      join(workdir, marker),
      ['bomb() { bomb | bomb & }', 'bomb', 'sleep 3', 'echo "still here"'].join('\n'),
    );
    const result = await sandbox.run({
      command: ['sh', `/workspace/${marker}`],
      workdir,
      limits: { timeoutMs: 6_000, maxProcesses: 32 },
    });
    expect(result.exceeded).toContain('processes');
    expect(result.durationMs).toBeLessThan(9_000);
    expect(processesWith(marker)).toEqual([]);
    expect(spawnSync('sh', ['-c', 'echo host is fine'], { encoding: 'utf8' }).stdout).toBe('host is fine\n');
  });

  it('caps the size of a file: writing past the limit fails and the file stops at the limit', async () => {
    const result = await sandbox.run({ command: ['sh', '-c', 'head -c 3145728 /dev/zero > big'], workdir });
    expect(result.exitCode).not.toBe(0);
    expect(statSync(join(workdir, 'big')).size).toBe(1024 * 1024);
    const dd = await sandbox.run({
      command: ['dd', 'if=/dev/zero', 'of=big2', 'bs=64k', 'count=64'],
      workdir,
      limits: { fileSizeBytes: 256 * 1024 },
    });
    expect(dd.exitCode).not.toBe(0);
    expect(statSync(join(workdir, 'big2')).size).toBe(256 * 1024);
    // no core file from the SIGXFSZ either
    expect(existsSync(join(workdir, 'core'))).toBe(false);
  });

  it('kills a process that allocates past the memory limit', async (ctx) => {
    need(ctx, requirements.sandboxLimit(report, 'memory'));
    const result = await sandbox.run({
      command: ['/usr/bin/python3', '-c', 'b = bytearray(512 * 1024 * 1024); print("allocated")'],
      workdir,
      limits: { memoryBytes: 64 * 1024 * 1024 },
    });
    expect(result.exitCode).toBe(128 + 9);
    expect(result.stdout).not.toContain('allocated');
    expect(result.exceeded).toEqual(['memory']);
    // under the limit it runs
    const small = await sandbox.run({
      command: ['/usr/bin/python3', '-c', 'b = bytearray(16 * 1024 * 1024); print("allocated")'],
      workdir,
      limits: { memoryBytes: 64 * 1024 * 1024 },
    });
    expect(small).toMatchObject({ exitCode: 0, stdout: 'allocated\n', exceeded: [] });
  });

  it('stops a busy loop at the CPU limit', async () => {
    const result = await sandbox.run({
      command: ['sh', '-c', 'while :; do :; done'],
      workdir,
      limits: { cpuSeconds: 1, timeoutMs: 15_000 },
    });
    expect(result.timedOut).toBe(false);
    // SIGXCPU at the soft limit (bwrap reports it as 128 + 24), SIGKILL at the hard one
    expect([128 + 24, 128 + 9]).toContain(result.exitCode);
    expect(result.durationMs).toBeLessThan(10_000);
  });

  it('limits open files', async () => {
    const result = await sandbox.run({ command: ['sh', '-c', 'ulimit -n; ulimit -Hn'], workdir });
    expect(result.stdout).toBe('64\n64\n');
    const many = await sandbox.run({
      command: ['/usr/bin/python3', '-c', 'fs = [open("/dev/null") for _ in range(200)]'],
      workdir,
    });
    expect(many.exitCode).toBe(1);
    expect(many.stderr).toContain('Too many open files');
  });

  it('keeps the tail of output beyond the cap, per stream', async () => {
    const result = await sandbox.run({
      command: ['sh', '-c', 'seq 1 100000; echo "the end" >&2'],
      workdir,
      limits: { outputBytes: 1000 },
    });
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.stdout)).toBeLessThanOrEqual(1000);
    expect(result.stdout.endsWith('99999\n100000\n')).toBe(true);
    expect(result.stderr).toBe('the end\n');
    const short = await sandbox.run({ command: ['echo', 'short'], workdir });
    expect(short).toMatchObject({ stdout: 'short\n', truncated: false });
  });

  it('passes stdin, runs in a subdirectory, and refuses a cwd outside the work directory', async () => {
    const sub = newDir();
    spawnSync('mkdir', ['-p', join(sub, 'pkg')]);
    const result = await sandbox.run({
      command: ['sh', '-c', 'pwd; cat'],
      workdir: sub,
      cwd: 'pkg',
      stdin: 'from stdin',
    });
    expect(result.stdout).toBe('/workspace/pkg\nfrom stdin');
    await expect(sandbox.run({ command: ['true'], workdir: sub, cwd: '../..' })).rejects.toThrow(
      /inside the work directory/,
    );
    await expect(sandbox.run({ command: ['true'], workdir: '/' })).rejects.toThrow(/would expose/);
  });
});
