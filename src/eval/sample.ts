import { createHash } from 'node:crypto';

/**
 * A stable subset of `n` instances: each repository gives its share in turn (so a small sample
 * still covers every repository), and within a repository the instances come in the order of a
 * hash of their id, not of the file. The same data set and `n` always give the same subset, and
 * a larger `n` holds a smaller one's, so `--sample 20` then `--sample 50 --resume` adds 30.
 * The subset is returned in the data set's own order.
 */
export function sampleInstances<T extends { instance_id: string; repo: string }>(instances: T[], n: number): T[] {
  if (n >= instances.length) return instances;
  const rank = (id: string) => createHash('sha256').update(id).digest('hex');
  const byRepo = new Map<string, T[]>();
  for (const instance of instances) byRepo.set(instance.repo, [...(byRepo.get(instance.repo) ?? []), instance]);
  const queues = [...byRepo.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, list]) => list.map((i) => ({ i, key: rank(i.instance_id) })).sort((a, b) => (a.key < b.key ? -1 : 1)));
  const chosen = new Set<T>();
  // Round robin over the repositories: instance k of each before instance k+1 of any.
  for (let k = 0; chosen.size < n; k++)
    for (const queue of queues) {
      const next = queue[k];
      if (next && chosen.size < n) chosen.add(next.i);
    }
  return instances.filter((i) => chosen.has(i));
}
