import type { Recalled } from '../memory/repo-memory.js';

/** Text in a fence the text itself cannot close. */
export function fenced(text: string, info = ''): string {
  let fence = '```';
  while (text.includes(fence)) fence += '`';
  return `${fence}${info}\n${text.endsWith('\n') ? text : `${text}\n`}${fence}`;
}

/** Lines with their 1-based numbers, as the inspector reads them. */
export function numbered(text: string, from = 1): string {
  return text
    .split('\n')
    .map((line, i) => `${String(from + i).padStart(5)}| ${line}`)
    .join('\n');
}

/** The repo memory section of a prompt, or nothing when there is none. */
export function memorySection(items: Recalled[]): string {
  if (items.length === 0) return '';
  return [
    '',
    'From earlier tasks on this repository (the account’s reviewers wrote or approved these; follow the lessons):',
    ...items.map((m) => `- [${m.kind} ${m.id}] ${m.text}`),
  ].join('\n');
}
