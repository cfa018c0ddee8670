import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export type TrackedSpawn = (command: string, args: string[], options?: SpawnOptions) => ChildProcess;

/**
 * The processes one task run started. Each child leads its own process group, so a kill
 * ends the child and everything it forked at once.
 */
export class ProcessSet {
  private readonly children = new Set<ChildProcess>();

  readonly spawn: TrackedSpawn = (command, args, options = {}) => {
    const child = spawn(command, args, { ...options, detached: true });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    child.once('error', () => this.children.delete(child));
    return child;
  };

  /**
   * SIGKILLs every process group and resolves when the leaders have exited and no other process of
   * their groups is left (or MEMBERS_WAIT_MS has passed).
   */
  async killAll(): Promise<void> {
    const groups = [...this.children].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
    const waits = [...this.children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
          child.once('exit', () => resolve());
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            try {
              child.kill('SIGKILL');
            } catch {
              // already gone
            }
          }
        }),
    );
    await Promise.all(waits);
    // A leader's exit event can come before its group's other members are gone: a SIGKILLed process
    // dies when it is next scheduled, which on a loaded machine is later. "Killed" means all of them.
    const until = Date.now() + MEMBERS_WAIT_MS;
    for (const group of groups) {
      while (groupLeft(group) && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/** How long killAll waits for a killed group's members after its leader has exited. */
const MEMBERS_WAIT_MS = 2_000;

/** Whether process group `pgid` still has a process that is not a zombie, SIGKILLing it again if so. */
function groupLeft(pgid: number): boolean {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    return false; // no process left in the group
  }
  return livingMembers(pgid);
}

/** Whether a process of group `pgid` other than a zombie is listed in /proc. */
function livingMembers(pgid: number): boolean {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return false; // no /proc: the signal was sent, nothing more to learn
  }
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses: read after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
  }
  return false;
}
