import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { SandboxUnavailableError, createSandbox } from '../sandbox/sandbox.js';
import { abortOnSignals } from './interrupt.js';

const USAGE = 'usage: emend sandbox exec --workdir DIR [--timeout S] [--network] -- CMD...';

// Exit codes of the sandbox itself, as timeout(1) and container runtimes use them; any
// other code is the command's own (128 + N when a signal N ended it).
const EXIT_USAGE = 2;
const EXIT_TIMED_OUT = 124;
const EXIT_SANDBOX_FAILED = 125;
const EXIT_INTERRUPTED = 130;

function usage(message: string): number {
  console.error(`emend: ${message}\n\n${USAGE}`);
  return EXIT_USAGE;
}

/**
 * `emend sandbox exec`: one command in the sandbox, exactly as the validator runs it (same
 * isolation, limits and output capture), for operators checking a host or a repository.
 * The captured output is printed when the command ends; the exit code is the command's.
 */
export async function sandboxCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'exec')
    return usage(sub === undefined ? 'sandbox needs a command: exec' : `unknown sandbox command "${sub}"`);
  const split = rest.indexOf('--');
  if (split === -1) return usage('put the command after --');
  const command = rest.slice(split + 1);
  if (command.length === 0) return usage('no command after --');
  let values: { workdir?: string; timeout?: string; network?: boolean };
  try {
    ({ values } = parseArgs({
      args: rest.slice(0, split),
      options: { workdir: { type: 'string' }, timeout: { type: 'string' }, network: { type: 'boolean' } },
    }));
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
  if (!values.workdir) return usage('sandbox exec needs --workdir');
  if (values.timeout !== undefined && !/^[1-9]\d*$/.test(values.timeout))
    return usage(`--timeout expects a positive number of seconds, got "${values.timeout}"`);
  const config = loadConfig(env);
  if (values.network && config.sandbox.setupNetwork === 'off') {
    console.error(
      'emend: --network is the dependency-install phase, whose network is turned off here ' +
        '(EMEND_SANDBOX_SETUP_NETWORK=off; proxy, the default, reaches the package registries)',
    );
    return EXIT_USAGE;
  }

  const sandbox = await createSandbox(config.sandbox, {
    protectedPaths: [config.dataDir],
    browserPath: config.site.chromiumPath,
  });
  if (sandbox.report().kind === 'unsafe-host')
    console.error('emend: WARNING: EMEND_SANDBOX=unsafe-host: the command runs on this host, unisolated');
  const interrupt = abortOnSignals();
  try {
    const result = await sandbox.run({
      command,
      workdir: values.workdir,
      network: values.network ?? false,
      limits: values.timeout === undefined ? {} : { timeoutMs: Number(values.timeout) * 1000 },
      signal: interrupt.signal,
    });
    process.stdout.write(result.stdout);
    process.stderr.write(result.stderr);
    const limits = sandbox.report().limits;
    if (result.truncated) console.error(`emend: output cut to its last ${limits.outputBytes} bytes per stream`);
    if (result.exceeded?.includes('memory'))
      console.error(`emend: the memory limit (${limits.memoryBytes} bytes) was reached; the kernel killed a process`);
    if (result.exceeded?.includes('processes'))
      console.error(`emend: the process limit (${limits.maxProcesses}) was reached; a fork failed`);
    if (result.timedOut) {
      console.error(
        `emend: timed out after ${values.timeout ?? limits.timeoutMs / 1000} s; the command and everything it ` +
          `started were killed`,
      );
      return EXIT_TIMED_OUT;
    }
    if (result.aborted) return EXIT_INTERRUPTED;
    if (result.exitCode !== null) return result.exitCode;
    return 128 + (result.signal ? constants.signals[result.signal] : 0);
  } catch (err) {
    if (err instanceof SandboxUnavailableError || err instanceof RangeError) {
      console.error(`emend: ${err.message}`);
      return EXIT_SANDBOX_FAILED;
    }
    throw err;
  } finally {
    interrupt.release();
  }
}
