import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { type SandboxOptions, createSandbox } from '../../src/sandbox/sandbox.js';
import type { Sandbox } from '../../src/sandbox/types.js';

const made: string[] = [];

/** A new directory, removed by removeDirs(). */
export function newDir(prefix = 'emend-sandbox-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function removeDirs() {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Small limits so that the limit tests are quick. */
export const SMALL = {
  EMEND_SANDBOX_TIMEOUT_S: '20',
  EMEND_SANDBOX_CPU_S: '10',
  EMEND_SANDBOX_MEMORY_MB: '128',
  EMEND_SANDBOX_PROCESSES: '64',
  EMEND_SANDBOX_FILE_SIZE_MB: '1',
  EMEND_SANDBOX_OPEN_FILES: '64',
  EMEND_SANDBOX_OUTPUT_KB: '64',
};

/** The real sandbox as the service builds it, over a data dir of its own. */
export async function realSandbox(
  env: Record<string, string> = {},
  options: SandboxOptions = {},
): Promise<{ sandbox: Sandbox; dataDir: string }> {
  const dataDir = newDir('emend-sandbox-data-');
  const config = loadConfig({ EMEND_DATA_DIR: dataDir, ...SMALL, ...env });
  const sandbox = await createSandbox(config.sandbox, { protectedPaths: [dataDir], ...options });
  return { sandbox, dataDir };
}

/** Host processes whose command line contains `marker`: what a command left running. */
export function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(marker)) found.push(`${pid}: ${cmdline}`);
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** A number no other process on the machine has on its command line. */
export function uniqueSeconds(): number {
  return 700_000 + Math.floor(Math.random() * 200_000);
}
