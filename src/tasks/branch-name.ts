import type { Task } from './task.js';

/** emend/<8 random hex of the id>-<words of the prompt>: unique per task, readable in a branch list. */
export function branchName(task: Pick<Task, 'id' | 'prompt'>): string {
  const short = task.id.replace(/-/g, '').slice(-8);
  const slug = task.prompt
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)
    .slice(0, 6)
    .join('-')
    .slice(0, 40)
    .replace(/-+$/, '');
  return `emend/${short}${slug ? `-${slug}` : ''}`;
}
