import type { LookupFunction } from 'node:net';

/**
 * A resolver standing in for DNS: the names given resolve to their addresses, in turn
 * (the last one repeats), so a name can change address between two lookups; others fail.
 */
export function fakeDns(names: Record<string, string[]>): LookupFunction & { asked: string[] } {
  const asked: string[] = [];
  const turn = new Map<string, number>();
  type Answer = (
    err: NodeJS.ErrnoException | null,
    address: string | { address: string; family: number }[],
    family?: number,
  ) => void;
  const lookup = (hostname: string, options: { all?: boolean }, callback: Answer) => {
    asked.push(hostname);
    const list = names[hostname];
    if (!list)
      return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
    const n = turn.get(hostname) ?? 0;
    turn.set(hostname, n + 1);
    const address = list[Math.min(n, list.length - 1)]!;
    const family = address.includes(':') ? 6 : 4;
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  return Object.assign(lookup as LookupFunction, { asked });
}
