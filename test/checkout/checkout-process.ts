// Another worker process on the same machine, for the cross-process lock tests.
// MODE=prepare: prints "ready", waits for a line on stdin, prepares a checkout and prints it as JSON.
// MODE=hold: takes the lock at LOCK_PATH, prints "held", and waits to be killed.
import { once } from 'node:events';
import { createLogger } from '../../src/logger.js';
import { prepareCheckout } from '../../src/checkout/checkout.js';
import { withFileLock } from '../../src/checkout/lock.js';

const env = process.env;
if (env.MODE === 'hold') {
  await withFileLock(env.LOCK_PATH!, { timeoutMs: 30_000 }, async () => {
    process.stdout.write('held\n');
    // A timer keeps the process (and so the lock) alive until it is killed.
    await new Promise(() => setInterval(() => {}, 60_000));
  });
} else {
  // Started together, so the processes really do race for the mirror.
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
  const ws = await prepareCheckout(
    { dataDir: env.DATA_DIR!, log: createLogger('info', process.stderr) },
    { taskId: env.TASK_ID!, repoUrl: env.REPO_URL!, baseBranch: 'main' },
  );
  process.stdout.write(`${JSON.stringify({ dir: ws.dir, baseCommit: ws.baseCommit })}\n`);
  process.exit(0);
}
