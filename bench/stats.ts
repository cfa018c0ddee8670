import { readFileSync } from 'node:fs';
import os from 'node:os';

/** Shared by the benchmarks: settings from the environment, summary statistics, the machine's state. */

export const envInt = (name: string, fallback: number) => {
  const n = Number(process.env[name]);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

export const log = (line: string) => console.log(line);

export const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** Pressure stall information (share of the last 60 s some task waited for CPU or I/O), where the kernel has it. */
export const pressure = () => {
  const avg60 = (what: string) => {
    try {
      return /^some .*avg60=([\d.]+)/m.exec(readFileSync(`/proc/pressure/${what}`, 'utf8'))?.[1];
    } catch {
      return undefined;
    }
  };
  const cpu = avg60('cpu');
  const io = avg60('io');
  return cpu === undefined ? '' : `; pressure (some, avg60): cpu ${cpu} %, io ${io ?? '?'} %`;
};

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Nearest-rank percentile. */
export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
};
