import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Memory and process-count limits through cgroups, where the host offers them: a cgroup per
 * command, joined by the command's first process before it execs bubblewrap, so everything
 * the command starts is counted and can be killed at once. Works with cgroup v1 (memory and
 * pids hierarchies, as on these machines) and v2 (a unified hierarchy with the memory and
 * pids controllers).
 */

type Controller = 'memory' | 'pids';

/** Where per-command cgroups of one controller are made. */
interface ControllerBase {
  version: 1 | 2;
  /** The directory the per-command cgroups go under. */
  base: string;
}

export interface CgroupSupport {
  version: 'v1' | 'v2' | 'none';
  memory?: ControllerBase;
  pids?: ControllerBase;
  /** Why a controller is not used, for the start-up log. */
  notes: string[];
}

export interface CgroupHost {
  /** /proc/self/mounts */
  mounts: string;
  /** /proc/self/cgroup */
  selfCgroup: string;
}

const GROUP_DIR = 'emend-sandbox';

function readHost(): CgroupHost {
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return '';
    }
  };
  return { mounts: read('/proc/self/mounts'), selfCgroup: read('/proc/self/cgroup') };
}

/** cgroup v1 mount points by controller, and the v2 mount point. */
function mountPoints(mounts: string) {
  const v1 = new Map<string, string>();
  let v2: string | undefined;
  for (const line of mounts.split('\n')) {
    const [, dir, type, options] = line.split(' ');
    if (!dir || !options) continue;
    if (type === 'cgroup2') v2 ??= dir;
    if (type === 'cgroup')
      for (const option of options.split(',')) if (option === 'memory' || option === 'pids') v1.set(option, dir);
  }
  return { v1, v2 };
}

/** This process's cgroup path in the v1 hierarchy holding `controller`, or in v2 ('0::/path'). */
function ownPath(selfCgroup: string, controller: Controller | ''): string | undefined {
  for (const line of selfCgroup.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const [, , controllers, path] = match;
    if (controller === '' ? controllers === '' : controllers!.split(',').includes(controller)) return path;
  }
  return undefined;
}

function limitFile(controller: Controller, version: 1 | 2) {
  if (controller === 'pids') return 'pids.max';
  return version === 1 ? 'memory.limit_in_bytes' : 'memory.max';
}

/** Makes a throwaway cgroup under `base`, sets a limit in it and removes it. */
function probe(base: string, controller: Controller, version: 1 | 2): boolean {
  const dir = join(base, `probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, limitFile(controller, version)), controller === 'pids' ? '64' : String(64 * 1024 * 1024));
    return true;
  } catch {
    return false;
  } finally {
    try {
      rmdirSync(dir);
    } catch {
      // never made
    }
  }
}

function tryWrite(path: string, value: string): boolean {
  try {
    writeFileSync(path, value);
    return true;
  } catch {
    return false;
  }
}

/**
 * v2: per-command cgroups go in a directory beside this process's own cgroup (a cgroup with
 * processes in it may not hand controllers to children), or under the root when the process
 * sits in the root. The controllers must be enabled down to it.
 */
function v2Base(mount: string, own: string, controller: Controller): string | undefined {
  if (!readFileSafe(join(mount, 'cgroup.controllers')).split(/\s+/).includes(controller)) return undefined;
  const parent = own === '/' ? '/' : own.replace(/\/[^/]*$/, '') || '/';
  const parentDir = join(mount, parent);
  if (!readFileSafe(join(parentDir, 'cgroup.subtree_control')).split(/\s+/).includes(controller))
    tryWrite(join(parentDir, 'cgroup.subtree_control'), `+${controller}`);
  const base = join(parentDir, GROUP_DIR);
  try {
    mkdirSync(base, { recursive: true });
  } catch {
    return undefined;
  }
  tryWrite(join(base, 'cgroup.subtree_control'), `+${controller}`);
  return probe(base, controller, 2) ? base : undefined;
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Removes the cgroups of commands whose service process is gone (killed before it could
 * clean up): their names start with its pid. A cgroup still holding processes stays.
 */
function removeStale(base: string) {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = /^(\d+)-/.exec(name)?.[1];
    if (owner === undefined || existsSync(`/proc/${owner}`)) continue;
    try {
      rmdirSync(join(base, name));
    } catch {
      // not empty, or not a cgroup
    }
  }
}

/** Finds where this process may make cgroups with memory and pids limits. */
export function detectCgroups(host: CgroupHost = readHost()): CgroupSupport {
  const { v1, v2 } = mountPoints(host.mounts);
  const support: CgroupSupport = { version: 'none', notes: [] };
  for (const controller of ['memory', 'pids'] as const) {
    const v1Mount = v1.get(controller);
    let found: ControllerBase | undefined;
    if (v1Mount) {
      // Under our own cgroup first, so the commands stay inside whatever limits the service has.
      const own = ownPath(host.selfCgroup, controller) ?? '/';
      for (const base of [join(v1Mount, own, GROUP_DIR), join(v1Mount, GROUP_DIR)]) {
        if (probe(base, controller, 1)) {
          found = { version: 1, base };
          break;
        }
      }
      if (!found) support.notes.push(`cannot make cgroups under ${v1Mount} (${controller}, v1)`);
    } else if (v2) {
      const base = v2Base(v2, ownPath(host.selfCgroup, '') ?? '/', controller);
      if (base) found = { version: 2, base };
      else
        support.notes.push(
          `the ${controller} controller of the cgroup v2 hierarchy at ${v2} is not available to this process`,
        );
    } else {
      support.notes.push(`no ${controller} cgroup controller is mounted`);
    }
    if (found) {
      support[controller] = found;
      removeStale(found.base);
    }
  }
  const versions = [support.memory?.version, support.pids?.version].filter((v) => v !== undefined);
  support.version = versions.length === 0 ? 'none' : versions.includes(1) ? 'v1' : 'v2';
  return support;
}

/** The cgroups of one command: made before it starts, emptied and removed after it ends. */
export class CommandCgroup {
  private constructor(private readonly dirs: Array<{ dir: string; controllers: Controller[]; version: 1 | 2 }>) {}

  /** Makes the command's cgroups and sets the limits; undefined when the host has none. */
  static create(
    support: CgroupSupport,
    limits: { memoryBytes: number; maxProcesses: number },
  ): CommandCgroup | undefined {
    const id = `${process.pid}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
    const dirs: Array<{ dir: string; controllers: Controller[]; version: 1 | 2 }> = [];
    for (const controller of ['memory', 'pids'] as const) {
      const where = support[controller];
      if (!where) continue;
      const dir = join(where.base, id);
      const existing = dirs.find((d) => d.dir === dir);
      if (existing) existing.controllers.push(controller);
      else dirs.push({ dir, controllers: [controller], version: where.version });
    }
    if (dirs.length === 0) return undefined;
    const group = new CommandCgroup(dirs);
    try {
      for (const { dir, controllers, version } of dirs) {
        mkdirSync(dir);
        if (controllers.includes('memory')) {
          const bytes = String(limits.memoryBytes);
          if (version === 1) {
            writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
            // Memory plus swap, when the kernel accounts swap: no way around the cap through swap.
            if (existsSync(join(dir, 'memory.memsw.limit_in_bytes')))
              writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), bytes);
          } else {
            writeFileSync(join(dir, 'memory.max'), bytes);
            if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
            if (existsSync(join(dir, 'memory.oom.group'))) writeFileSync(join(dir, 'memory.oom.group'), '1');
          }
        }
        if (controllers.includes('pids')) writeFileSync(join(dir, 'pids.max'), String(limits.maxProcesses));
      }
    } catch (err) {
      group.remove();
      throw err;
    }
    return group;
  }

  /** The files the command's first process writes its pid into. */
  get procsFiles(): string[] {
    return this.dirs.map((d) => join(d.dir, 'cgroup.procs'));
  }

  private pids(): number[] {
    const pids = new Set<number>();
    for (const file of this.procsFiles) {
      for (const line of readFileSafe(file).split('\n')) if (line.trim() !== '') pids.add(Number(line));
    }
    return [...pids];
  }

  /** SIGKILLs every process in the cgroups. */
  kill(): void {
    for (const { dir, version } of this.dirs) {
      if (version === 2 && existsSync(join(dir, 'cgroup.kill'))) tryWrite(join(dir, 'cgroup.kill'), '1');
    }
    for (const pid of this.pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }

  /** Kills what is left and waits until the cgroups are empty; false if they are not by the deadline. */
  async drain(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.pids().length === 0) return true;
      if (Date.now() > deadline) return false;
      this.kill();
      await sleep(5);
    }
  }

  /** The limits the command ran into, read before the cgroups go. */
  exceeded(): Array<'memory' | 'processes'> {
    const hit: Array<'memory' | 'processes'> = [];
    for (const { dir, controllers, version } of this.dirs) {
      if (controllers.includes('memory')) {
        const text = readFileSafe(join(dir, version === 1 ? 'memory.oom_control' : 'memory.events'));
        const kills = Number(/^oom_kill (\d+)/m.exec(text)?.[1] ?? 0);
        const underOom = Number(/^under_oom (\d+)/m.exec(text)?.[1] ?? 0);
        if (kills > 0 || underOom > 0) hit.push('memory');
      }
      if (controllers.includes('pids')) {
        if (Number(/^max (\d+)/m.exec(readFileSafe(join(dir, 'pids.events')))?.[1] ?? 0) > 0) hit.push('processes');
      }
    }
    return hit;
  }

  /** Removes the cgroups (they must be empty: drain first); false when one could not be removed. */
  remove(): boolean {
    let removed = true;
    for (const { dir } of this.dirs) {
      try {
        rmdirSync(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') removed = false;
      }
    }
    return removed;
  }
}
