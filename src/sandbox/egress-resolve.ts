import { type LookupFunction, isIP } from 'node:net';

/**
 * Name resolution for the setup policy (the egress proxy and the downloads made for a setup):
 * every address a name resolves to, judged before anything connects, and a resolver that then
 * answers only those, so a name that changes its answer in between (DNS rebinding) is not asked
 * twice.
 */

export type Resolved = { address: string; family: number }[];

/**
 * Waits before asking again after a temporary failure (EAI_AGAIN: the resolver did not answer in
 * time, as on a loaded machine). One unanswered lookup would fail a whole install, and the name
 * is still judged by what it resolves to when it does answer.
 */
export const TEMPORARY_RETRY_MS = [250, 1000];

export async function resolveAll(
  resolve: LookupFunction,
  host: string,
  retryMs: readonly number[] = TEMPORARY_RETRY_MS,
): Promise<Resolved> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await resolveOnce(resolve, host);
    } catch (err) {
      const wait = retryMs[attempt];
      if ((err as NodeJS.ErrnoException).code !== 'EAI_AGAIN' || wait === undefined) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

function resolveOnce(resolve: LookupFunction, host: string): Promise<Resolved> {
  return new Promise((done, fail) =>
    resolve(host, { all: true }, (err, found) => {
      if (err) return fail(err);
      done((Array.isArray(found) ? found : [{ address: found, family: isIP(found) }]) as Resolved);
    }),
  );
}

/** A resolver that answers the addresses already judged, whatever the name would resolve to now. */
export const pinned =
  (addresses: Resolved): LookupFunction =>
  (_host, options, callback) => {
    if (options.all) return callback(null, addresses);
    const [first] = addresses as [Resolved[number]];
    callback(null, first.address, first.family);
  };
