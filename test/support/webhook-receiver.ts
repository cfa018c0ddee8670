import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** What the receiver does with one request: answer a status (with headers), or hang (a slow endpoint). */
export type ReceiverAnswer = { status: number; headers?: Record<string, string> } | { hang: true };

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** Answers for the next requests, in order; 200 once they run out. */
  script(...answers: ReceiverAnswer[]): void;
  /** The event of a request, verified with the standardwebhooks library and the given secret (throws when it fails). */
  verify(secret: string, r: Received): { id: string; type: string; timestamp: string; data: Record<string, unknown> };
  close(): Promise<void>;
}

/**
 * A real HTTP endpoint for webhook tests. Signatures are checked with the Standard Webhooks
 * reference library, never with the service's own code.
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const answers: ReceiverAnswer[] = [];
  const hanging = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers.shift() ?? { status: 200 };
      if ('hang' in answer) {
        hanging.add(() => res.destroy());
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    script: (...a) => answers.push(...a),
    verify(secret, r) {
      const headers = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(r.headers[h] ?? '')]),
      );
      return new Webhook(secret).verify(r.body, headers) as ReturnType<WebhookReceiver['verify']>;
    },
    close: async () => {
      for (const end of hanging) end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
