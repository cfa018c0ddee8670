import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { type AddressInfo, type Server, createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { newDir, realSandbox, removeDirs } from './helpers.js';

// Escape attempts against the real bubblewrap sandbox: each must fail.
describe('the sandbox holds', () => {
  let sandbox: Sandbox;
  let dataDir: string;
  let workdir: string;
  const sh = (script: string, extra: Partial<Parameters<Sandbox['run']>[0]> = {}) =>
    sandbox.run({ command: ['sh', '-c', script], workdir, ...extra });

  beforeAll(async () => {
    ({ sandbox, dataDir } = await realSandbox());
    expect(sandbox.report()).toMatchObject({ kind: 'bubblewrap' });
    workdir = newDir();
    // The service's data dir, as the service keeps it: a database and a secret key.
    writeFileSync(join(dataDir, 'secret.key'), 'not-for-repository-code\n', { mode: 0o600 });
    mkdirSync(join(dataDir, 'pgdata'));
  });
  afterAll(removeDirs);

  it('runs as uid 1000 with no capabilities, no new privileges and no user namespace of its own', async () => {
    const r = await sh(
      'id -u; id -g; grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)" /proc/self/status; unshare -U ' +
        'true && echo userns-made; unshare -r true && echo root-made; true',
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [uid, gid, ...status] = r.stdout.trim().split('\n');
    expect([uid, gid]).toEqual(['1000', '1000']);
    expect(status).toEqual([
      'CapInh:\t0000000000000000',
      'CapPrm:\t0000000000000000',
      'CapEff:\t0000000000000000',
      'CapBnd:\t0000000000000000',
      'CapAmb:\t0000000000000000',
      'NoNewPrivs:\t1',
    ]);
    expect(r.stderr).toContain('unshare failed');
  });

  it("cannot read /etc/shadow, nor see the host's users or home directories", async () => {
    const r = await sh(
      'cat /etc/shadow; echo "rc=$?"; cat /etc/passwd; ls /etc; ls /root /home 2>&1; cat /etc/ssl/private/* 2>&1',
    );
    expect(r.stdout).toContain('rc=1');
    expect(r.stderr).toContain('/etc/shadow: No such file or directory');
    expect(r.stdout).not.toContain('shadow\n');
    expect(r.stdout).toContain('sandbox:x:1000:1000');
    expect(r.stdout).not.toMatch(/^root:/m);
    expect(r.stdout).toContain("ls: cannot access '/root': No such file or directory");
    expect(r.stdout).toContain("ls: cannot access '/home': No such file or directory");
    expect(r.stdout).toMatch(/\/etc\/ssl\/private\/\*'?: No such file or directory/);
  });

  it('cannot read the data dir, which is not even there', async () => {
    const key = join(dataDir, 'secret.key');
    const read = await sh(
      `cat ${key}; cat /proc/1/root${key}; cat /proc/self/root${key}; find / -xdev -name secret.key 2>/dev/null; true`,
    );
    expect(read.stdout).toBe('');
    expect(read.stderr).toContain(`cat: ${key}: No such file or directory`);
    expect(read.stderr).toContain(`cat: /proc/1/root${key}: No such file or directory`);
    const look = await sh(`ls -d ${dataDir}; ls -A ${dirname(dataDir)}`);
    expect(look.stderr).toContain(`cannot access '${dataDir}'`);
    expect(look.stdout).not.toContain(basename(dataDir));
    // The data dir's parent, the host's /tmp here, is the sandbox's own empty /tmp.
    if (dirname(dataDir) === '/tmp') expect(look.stdout).toBe('');
  });

  it('gets a cleared environment: no secret of the service reaches it, through env or /proc', async () => {
    const secrets = {
      EMEND_SECRET_KEY: 'a'.repeat(64),
      OPENAI_API_KEY: 'sk-test-not-for-sandboxes',
      DATABASE_URL: 'postgres://u:pw-not-for-sandboxes@h/db',
    };
    const saved = Object.fromEntries(Object.keys(secrets).map((k) => [k, process.env[k]]));
    Object.assign(process.env, secrets);
    try {
      const r = await sh('env; echo ---; cat /proc/*/environ | tr "\\0" "\\n"; echo ---; ls /proc/self/fd', {
        env: { CI: 'true' },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      for (const value of Object.values(secrets)) expect(r.stdout).not.toContain(value);
      for (const name of Object.keys(secrets)) expect(r.stdout).not.toContain(name);
      const names = r.stdout
        .split('---')[0]!
        .trim()
        .split('\n')
        .map((l) => l.split('=')[0])
        .sort();
      expect(names).toEqual(['CI', 'HOME', 'LANG', 'PATH', 'PWD', 'USER']);
      // stdin, stdout, stderr and ls's own directory: no descriptor of the service leaks in
      expect(r.stdout.split('---')[2]!.trim().split('\n')).toEqual(['0', '1', '2', '3']);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  describe('the network', () => {
    let server: Server;
    let port: number;
    let connections = 0;
    beforeAll(async () => {
      server = createServer((socket) => {
        connections++;
        socket.end('hello from the host\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const hostAddress = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

    it('is off: only lo exists, and a server on the host (loopback or its own address) is out of reach', async () => {
      const targets = ['127.0.0.1', ...(hostAddress ? [hostAddress] : [])];
      const script = [
        'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "',
        ...targets.map(
          (ip) =>
            `timeout 5 bash -c 'exec 3<>/dev/tcp/${ip}/${port} && head -1 <&3' && echo "reached ${ip}" || echo ` +
            `"refused ${ip}"`,
        ),
      ].join('; ');
      const r = await sh(script);
      expect(r.stdout.trim().split('\n')).toEqual(['lo', ...targets.map((ip) => `refused ${ip}`)]);
      expect(connections).toBe(0);
    });

    it('is the host’s for a command that asks for it in host mode, and refused when off', async () => {
      const { sandbox: off } = await realSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
      await expect(off.run({ command: ['true'], workdir, network: true })).rejects.toThrow(
        /EMEND_SANDBOX_SETUP_NETWORK=off/,
      );
      const { sandbox: withNetwork } = await realSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'host' });
      expect(withNetwork.report()).toMatchObject({ networkForSetup: true, setupNetwork: 'host' });
      const r = await withNetwork.run({
        command: ['bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3; ls /etc`],
        workdir,
        network: true,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain('hello from the host');
      expect(r.stdout).toContain('resolv.conf');
      expect(connections).toBe(1);
    });
  });

  it('writes nowhere but the work directory (and its private /tmp); files it makes are its own', async () => {
    const targets = ['/usr/evil', '/etc/evil', '/evil', `${dataDir}/evil`, '/proc/evil', '/workspace/../evil'];
    const script = [
      ...targets.map((p) => `touch ${p} 2>/dev/null && echo "wrote ${p}" || echo "refused ${p}"`),
      // /proc/sys would reach the host's kernel settings: write a value back unchanged, it must still be refused
      'v=$(cat /proc/sys/kernel/printk_ratelimit); (echo "$v" > /proc/sys/kernel/printk_ratelimit) 2>/dev/null ' +
        '&& echo "wrote sysctl" || echo "refused sysctl"',
      'echo inside > /workspace/made && stat -c "%u:%g" /workspace/made',
      'echo scratch > /tmp/scratch && cat /tmp/scratch',
    ].join('; ');
    const r = await sh(script);
    expect(r.stdout.trim().split('\n')).toEqual([
      ...targets.map((p) => `refused ${p}`),
      'refused sysctl',
      '1000:1000',
      'scratch',
    ]);
    expect(readFileSync(join(workdir, 'made'), 'utf8')).toBe('inside\n');
    expect(existsSync(join(dataDir, 'evil'))).toBe(false);
    expect(existsSync('/evil')).toBe(false);
    expect(existsSync(join(dirname(workdir), 'evil'))).toBe(false);
  });

  it('sees the tool roots read-only at their own path', async () => {
    const tools = newDir('emend-sandbox-tools-');
    mkdirSync(join(tools, 'bin'));
    writeFileSync(join(tools, 'bin', 'tool'), '#!/bin/sh\necho tool ran\n', { mode: 0o755 });
    const { sandbox: withTools } = await realSandbox({ EMEND_SANDBOX_TOOL_ROOTS: tools });
    expect(withTools.report().toolRoots).toEqual([tools]);
    const r = await withTools.run({
      command: ['sh', '-c', `${tools}/bin/tool; touch ${tools}/bin/evil && echo wrote || echo refused`],
      workdir,
    });
    expect(r.stdout).toBe('tool ran\nrefused\n');
    expect(existsSync(join(tools, 'bin', 'evil'))).toBe(false);
    expect(statSync(tools).isDirectory()).toBe(true);
  });

  it('sees the directories of the work directory it is given read-only as such, and none reached through a symlink', async () => {
    const own = newDir();
    mkdirSync(join(own, 'tools'));
    writeFileSync(join(own, 'tools', 'plugin.py'), 'placed\n', { mode: 0o644 });
    const script = [
      'cat /workspace/tools/plugin.py',
      'echo changed > /workspace/tools/plugin.py 2>/dev/null && echo "wrote file" || echo "refused file"',
      'chmod 666 /workspace/tools/plugin.py 2>/dev/null && echo "chmod done" || echo "refused chmod"',
      'touch /workspace/tools/new 2>/dev/null && echo "wrote new" || echo "refused new"',
      'mv /workspace/tools /workspace/moved 2>/dev/null && echo "moved" || echo "refused move"',
      'umount /workspace/tools 2>/dev/null && echo "unmounted" || echo "refused umount"',
      'echo elsewhere > /workspace/other && echo "wrote work directory"',
    ].join('; ');
    const r = await sandbox.run({ command: ['sh', '-c', script], workdir: own, readOnlyPaths: ['tools'] });
    expect(r.stdout.trim().split('\n')).toEqual([
      'placed',
      'refused file',
      'refused chmod',
      'refused new',
      'refused move',
      'refused umount',
      'wrote work directory',
    ]);
    expect(readFileSync(join(own, 'tools', 'plugin.py'), 'utf8')).toBe('placed\n');
    // bwrap would follow a link at the bind's source: one there (as a command could leave) is refused before the run
    symlinkSync(dataDir, join(own, 'link'));
    await expect(sandbox.run({ command: ['true'], workdir: own, readOnlyPaths: ['link'] })).rejects.toThrow(
      /not a directory of the work directory/,
    );
    await expect(sandbox.run({ command: ['true'], workdir: own, readOnlyPaths: ['link/pgdata'] })).rejects.toThrow(
      /not a directory of the work directory/,
    );
    await expect(sandbox.run({ command: ['true'], workdir: own, readOnlyPaths: ['..'] })).rejects.toThrow(RangeError);
  });

  it('hands the output to onOutput as it arrives, before the command ends', async () => {
    const seen: Array<{ stream: string; text: string; atMs: number }> = [];
    const started = performance.now();
    const r = await sandbox.run({
      command: ['sh', '-c', 'echo first; echo to-stderr >&2; sleep 2; echo last'],
      workdir,
      onOutput: (stream, chunk) => seen.push({ stream, text: chunk.toString(), atMs: performance.now() - started }),
    });
    expect(r.stdout).toBe('first\nlast\n');
    const first = seen.find((s) => s.text.includes('first'))!;
    const last = seen.find((s) => s.text.includes('last'))!;
    expect(seen.find((s) => s.stream === 'stderr')?.text).toBe('to-stderr\n');
    // "first" came a whole sleep before "last": it was handed over while the command still ran
    expect(last.atMs - first.atMs).toBeGreaterThan(1_500);
  });
});
