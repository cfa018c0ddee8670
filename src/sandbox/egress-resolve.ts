import { type LookupFunction, isIP } from 'node:net';

/**
 * Name resolution for the setup policy (the egress proxy and the downloads made for a setup):
 * every address a name resolves to, judged before anything connects, and a resolver that then
 * answers only those, so a name that changes its answer in between (DNS rebinding) is not asked
 * twice.
 */

export type Resolved = { address: string; family: number }[];

export function resolveAll(resolve: LookupFunction, host: string): Promise<Resolved> {
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
