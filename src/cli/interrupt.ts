/**
 * An abort signal that Ctrl-C (SIGINT) and SIGTERM fire, for a command that stops its work
 * cleanly and says so in its exit code rather than dying mid-run; release() in a finally, so
 * the process handles those signals as before once the command is done.
 */
export function abortOnSignals(): { signal: AbortSignal; release: () => void } {
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: abort.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
