/**
 * A model call's own abort signal: aborted by the task's kill switch or when the call's time is
 * up, whichever comes first.
 *
 * Not `AbortSignal.any([kill, AbortSignal.timeout(ms)])`: on Node 20 the composite holds its
 * sources weakly and nothing else holds the timeout signal, so a garbage collection during the
 * wait drops the timeout and the call waits for ever (nodejs/node#57736). Here the timer is an
 * ordinary one the event loop keeps, its callback holds the controller, and the caller holds
 * the handle until `done()` clears both.
 */
export interface CallDeadline {
  signal: AbortSignal;
  /** True once the time ran out (not after a kill). */
  readonly timedOut: boolean;
  /** Clears the timer and the kill listener; call when the call ends, however it ends. */
  done(): void;
}

export function callDeadline(kill: AbortSignal, ms: number): CallDeadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no complete answer within ${ms} ms`, 'TimeoutError'));
  }, ms);
  const onKill = () => controller.abort(kill.reason);
  if (kill.aborted) onKill();
  else kill.addEventListener('abort', onKill, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    done() {
      clearTimeout(timer);
      kill.removeEventListener('abort', onKill);
    },
  };
}
