import type { Command } from 'commander';
import type { RemoteApi } from './api.js';
import type { Output } from './output.js';

/** What an action gets: the environment, where to write, and the server's API once it is needed. */
export interface RemoteContext {
  env: NodeJS.ProcessEnv;
  o: Output;
  api(): RemoteApi;
}

/** Wraps an action: builds its context from the command's flags and records the exit code it returns. */
export type Act = (run: (ctx: RemoteContext, cmd: Command) => Promise<number>) => (...args: unknown[]) => Promise<void>;

/** A leaf command with the --json every remote command takes. */
export function leaf(parent: Command, name: string, description: string): Command {
  return parent.command(name).description(description).option('--json', 'print JSON for scripts');
}
