import { accessSync, constants, statSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/**
 * Headless Chromium for the site validator. The service never downloads a browser: it drives
 * the system's (Debian's `chromium` package by default) through playwright-core.
 */

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

/** How long Chromium may take to start before the launch counts as failed. */
export const DEFAULT_LAUNCH_TIMEOUT_MS = 30_000;

/**
 * Flags for a throwaway, offline, headless browser. `--no-sandbox` because the service often
 * runs as root in a container where Chromium's own sandbox cannot start; the pages it loads
 * are served from memory and every request to another host is blocked (check-browser.ts).
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-extensions',
  '--mute-audio',
];

/** The configured Chromium: `EMEND_CHROMIUM_PATH`, else /usr/bin/chromium. */
export function chromiumPathFromEnv(env: Record<string, string | undefined> = process.env): string {
  const raw = env.EMEND_CHROMIUM_PATH?.trim();
  return raw ? raw : DEFAULT_CHROMIUM_PATH;
}

export class ChromiumNotFoundError extends Error {
  constructor(readonly path: string) {
    super(`headless Chromium not found at ${path}: install Debian's chromium or set EMEND_CHROMIUM_PATH`);
    this.name = 'ChromiumNotFoundError';
  }
}

/** Throws ChromiumNotFoundError unless `path` is an executable file. */
export function assertChromium(path: string): void {
  try {
    if (!statSync(path).isFile()) throw new Error('not a file');
    accessSync(path, constants.X_OK);
  } catch {
    throw new ChromiumNotFoundError(path);
  }
}

export interface LaunchOptions {
  timeoutMs?: number;
}

/** Starts headless Chromium from `executablePath`; the caller closes it (in a finally). */
export async function launchChromium(executablePath: string, options: LaunchOptions = {}): Promise<Browser> {
  assertChromium(executablePath);
  return chromium.launch({
    executablePath,
    headless: true,
    args: [...CHROMIUM_ARGS],
    timeout: options.timeoutMs ?? DEFAULT_LAUNCH_TIMEOUT_MS,
    // The validator owns the process's lifetime; Node's signals stay with the service.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
}
