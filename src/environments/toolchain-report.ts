import type { Sandbox } from '../sandbox/types.js';
import { TOOLCHAINS, type ToolchainFacts, probeToolchains } from './toolchains.js';

/**
 * Every toolchain the sandbox has, asked once (a JVM start or two: a few seconds) and kept:
 * `npm start` asks at start-up and logs it; /health shows it once known.
 */
export class ToolchainReport {
  private probing: Promise<ToolchainFacts> | undefined;
  private found: ToolchainFacts | undefined;

  constructor(private readonly sandbox: Sandbox) {}

  /** Starts the probe the first time; the same answer after. A sandbox that cannot run reports nothing. */
  start(): Promise<ToolchainFacts> {
    this.probing ??= probeToolchains(this.sandbox, TOOLCHAINS).then(
      (facts) => {
        this.found = facts;
        return facts;
      },
      () => {
        this.found = {};
        return {};
      },
    );
    return this.probing;
  }

  /** What the probe found, or undefined while it runs (or before it started). */
  current(): ToolchainFacts | undefined {
    return this.found;
  }
}
