import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunTree } from '../environments/copies.js';
import { SANDBOX_WORKDIR } from '../sandbox/bwrap-args.js';

/**
 * The validator's pytest plugin: one line per event on the descriptor EMEND_PROGRESS_FD
 * names, so the validator sees which test is running while the run goes on and can stop
 * one that runs past the per-test timeout (docs/validator.md, "Hung tests"). It writes
 * with os.write on a descriptor of its own (a close-on-exec copy of EMEND_PROGRESS_FD):
 * pytest's capture, verbosity (`addopts = -q`) and terminal reporter do not change what it
 * says, and its lines cannot split pytest's own.
 * json.dumps keeps every line ASCII, so no node id can end a line early.
 */
const PLUGIN_SOURCE = `"""emend's progress reporter for pytest (loaded with -p emend_progress; see emend's docs/validator.md)."""
import json
import os


def _channel():
    # A private copy of the descriptor, high and close-on-exec: the processes tests start do
    # not inherit it, and a test that closes or reuses the low descriptors does not touch it.
    try:
        fd = int(os.environ["EMEND_PROGRESS_FD"])
        import fcntl

        own = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 200)
        os.close(fd)
        return own
    except (KeyError, ValueError, OSError, ImportError):
        return None


_FD = _channel()


def _emit(**event):
    if _FD is None:
        return
    try:
        os.write(_FD, ("emend-progress " + json.dumps(event) + "\\n").encode("ascii"))
    except OSError:
        pass


def pytest_collection_finish(session):
    _emit(event="collected", count=len(session.items))


def pytest_runtest_logstart(nodeid, location):
    _emit(event="start", id=nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _emit(event="finish", id=nodeid)
`;

/** The module name given to `-p`. */
export const PLUGIN_MODULE = 'emend_progress';

const PLUGIN_FLAG = /(^|\s)-p\s+emend_progress(?=\s|$)/;

/**
 * Whether a command loads the plugin. A detected pytest command gets `-p emend_progress`,
 * and repo memory keeps the command as run: a remembered command naming the plugin must
 * get it too, or pytest would stop at the import.
 */
export const namesProgressPlugin = (command: string): boolean => PLUGIN_FLAG.test(command);

/** The command without the plugin, for a sandbox that cannot place it (unsafe-host). */
export const withoutProgressPlugin = (command: string): string =>
  command.replace(new RegExp(PLUGIN_FLAG.source, 'g'), '');

/** Where the plugin lives in a run's workdir: beside repo/ and home/, never in the checkout. */
export const TREE_TOOLS = 'emend';

/** The descriptor the plugin writes to: the test command's shell points it at the sandbox's stderr pipe. */
export const PROGRESS_FD = 3;

/** The environment that makes the plugin importable and tells it where to write. */
export const PROGRESS_ENV: Readonly<Record<string, string>> = {
  PYTHONPATH: `${SANDBOX_WORKDIR}/${TREE_TOOLS}`,
  EMEND_PROGRESS_FD: String(PROGRESS_FD),
};

/**
 * Writes the plugin into the run's workdir, just before the test command (after the setup
 * phase, whose repository code could have put anything at that path): whatever is there is
 * removed first (rm does not follow links), the file is created exclusively, and the test
 * command then sees the directory read-only.
 */
export async function writeProgressPlugin(toolsDir: string): Promise<void> {
  await writeFile(join(toolsDir, `${PLUGIN_MODULE}.py`), PLUGIN_SOURCE, { flag: 'wx', mode: 0o444 });
}

/**
 * The run's tools directory made anew (after the setup phase, whose repository code could have
 * put anything at that path: rm does not follow links); the test command sees it read-only.
 */
export async function prepareToolsDir(tree: RunTree): Promise<string> {
  const dir = join(tree.workdir, TREE_TOOLS);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir);
  return dir;
}
