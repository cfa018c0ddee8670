import { createServer } from 'node:net';

/** A loopback port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A loopback port held open until `release()`: for a server that must know its address before it
 * can listen (a base URL in its configuration), so that nothing else started meanwhile takes it.
 */
export async function heldPort(): Promise<{ port: number; release(): Promise<void> }> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', resolve);
  });
  const { port } = srv.address() as { port: number };
  return { port, release: () => new Promise<void>((resolve) => srv.close(() => resolve())) };
}
