import { chmodSync } from 'node:fs';
import { type LookupFunction, type Socket, createServer, isIP } from 'node:net';
import { lookup as systemLookup } from 'node:dns';
import { join } from 'node:path';
import { type PrepareRequestFunctionOpts, RequestError, Server as ProxyServer } from 'proxy-chain';
import type { OutboundAllowRule } from '../config/outbound.js';
import { type HostDecision, decideHost, plainHost, refusedAddress } from './egress-policy.js';
import { type Resolved, pinned, resolveAll } from './egress-resolve.js';

/**
 * The setup phase's only way out (docs/environments.md). One HTTP proxy (proxy-chain: HTTP
 * CONNECT and plain HTTP) serves every setup command; each command gets a Unix socket of its
 * own, bound into its sandbox, so what went through it is counted per command. Every request
 * is judged by the setup policy (src/sandbox/egress-policy.ts) on its host name, then on every
 * address that name resolves to, and the connection is made to those judged addresses only: a
 * name that resolves again to somewhere else in between (DNS rebinding) is not asked twice.
 */

/** What one setup command reached, or tried to, per destination. */
export interface EgressRecord {
  host: string;
  port: number;
  allowed: boolean;
  /** Why it was refused. */
  reason?: string;
  /** Requests (a CONNECT tunnel is one) to this destination. */
  requests: number;
  /** Bytes from the sandbox to the destination, and back. */
  bytes_out: number;
  bytes_in: number;
}

/** One setup command's proxy: its socket, and the summary once it is over. */
export interface EgressSession {
  socketPath: string;
  /** Stops taking connections, cuts those still open, and answers what went through. */
  close(): Promise<EgressRecord[]>;
}

class SessionLog {
  private readonly records = new Map<string, EgressRecord>();

  note(host: string, port: number, refused?: string): EgressRecord {
    const key = `${host}:${port}:${refused ?? ''}`;
    let record = this.records.get(key);
    if (!record) {
      record = { host, port, allowed: refused === undefined, requests: 0, bytes_out: 0, bytes_in: 0 };
      if (refused !== undefined) record.reason = refused;
      this.records.set(key, record);
    }
    record.requests++;
    return record;
  }

  summary(): EgressRecord[] {
    return [...this.records.values()].sort((a, b) => b.bytes_in - a.bytes_in || a.host.localeCompare(b.host));
  }
}

export class EgressProxy {
  private readonly proxy: ProxyServer;
  private readonly logs = new WeakMap<Socket, SessionLog>();
  /** The record an open proxy connection's bytes are counted to (the last request allowed on it). */
  private readonly counted = new Map<number, EgressRecord>();

  constructor(
    private readonly rules: readonly OutboundAllowRule[],
    private readonly resolve: LookupFunction = systemLookup,
  ) {
    this.proxy = new ProxyServer({ port: 0, prepareRequestFunction: (opts) => this.prepare(opts) });
    this.proxy.on('connectionClosed', ({ connectionId, stats }) => {
      const record = this.counted.get(connectionId);
      this.counted.delete(connectionId);
      if (!record || !stats) return;
      record.bytes_out += stats.trgTxBytes ?? 0;
      record.bytes_in += stats.trgRxBytes ?? 0;
    });
  }

  /** Opens a command's socket in `dir` (a private directory of the service, bound into its sandbox). */
  async open(dir: string): Promise<EgressSession> {
    const socketPath = join(dir, 'proxy.sock');
    const log = new SessionLog();
    const sockets = new Set<Socket>();
    const listener = createServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      this.logs.set(socket, log);
      // proxy-chain drops a socket without a remote address (a guard for a Node quirk on TCP);
      // a Unix socket has none, so it is named for what it is.
      Object.defineProperty(socket, 'remoteAddress', { value: 'sandbox', configurable: true });
      this.proxy.server.emit('connection', socket);
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(socketPath, () => resolve());
    });
    // The sandbox's user maps to the service's own user or to root: the mode only has to let it connect.
    chmodSync(socketPath, 0o666);
    let closed: Promise<EgressRecord[]> | undefined;
    const close = async () => {
      await new Promise<void>((resolve) => {
        listener.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      // connectionClosed (the bytes) follows each socket's close event: let them land.
      await new Promise((resolve) => setImmediate(resolve));
      return log.summary();
    };
    return { socketPath, close: () => (closed ??= close()) };
  }

  private async prepare({ request, hostname, port, connectionId }: PrepareRequestFunctionOpts) {
    const log = this.logs.get(request.socket as Socket);
    if (!log) throw new RequestError('not a sandbox connection', 403);
    const host = plainHost(hostname);
    const refuse = (reason: string): never => {
      log.note(host, port, reason);
      throw new RequestError(`emend refused ${host}:${port}: ${reason}`, 403);
    };
    const decision: HostDecision = decideHost(this.rules, host, port);
    if (!decision.ok) return refuse(decision.reason);
    let addresses: Resolved;
    if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await resolveAll(this.resolve, host);
      } catch (err) {
        return refuse(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    if (addresses.length === 0) return refuse(`${host} resolves to no address`);
    for (const { address } of addresses) {
      const reason = refusedAddress(address, decision, host, port);
      if (reason !== undefined) return refuse(reason);
    }
    this.counted.set(connectionId, log.note(host, port));
    // proxy-chain types the option as dns.lookup itself (with its promisified twin), though it
    // only hands it to net.connect as `lookup`, which takes any LookupFunction.
    return { dnsLookup: pinned(addresses) as unknown as typeof systemLookup };
  }
}
