import { type Server, createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { type Outbound, createOutbound } from '../../src/outbound/outbound.js';
import { OutboundRefused } from '../../src/outbound/refused.js';
import { fakeDns } from '../support/fake-dns.js';

/** A real listener on 127.0.0.1 that counts the connections it accepted. */
interface Listener {
  port: number;
  connections: number;
  server: Server;
}

type Answer = { status: number; headers?: Record<string, string>; body?: string };

async function listen(handler: (path: string) => Answer): Promise<Listener> {
  const l = { port: 0, connections: 0 } as Listener;
  l.server = createServer((req, res) => {
    const r = handler(req.url ?? '/');
    res.writeHead(r.status, r.headers);
    res.end(r.body ?? '');
  });
  l.server.on('connection', () => {
    l.connections += 1;
  });
  await new Promise<void>((resolve) => l.server.listen(0, '127.0.0.1', resolve));
  l.port = (l.server.address() as AddressInfo).port;
  return l;
}

const refusal = (err: unknown) => {
  expect(err).toBeInstanceOf(OutboundRefused);
  return (err as Error).message;
};
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

let api: Listener;
let internal: Listener;
const opened: Outbound[] = [];
const outbound = (allow: string, lookup?: LookupFunction) => {
  const o = createOutbound(loadConfig({ EMEND_OUTBOUND_ALLOW: allow }).outboundAllow, { lookup });
  opened.push(o);
  return o;
};

beforeAll(async () => {
  internal = await listen(() => ({ status: 200, body: 'internal secret' }));
  api = await listen(
    (path): Answer =>
      path.startsWith('/to-internal')
        ? { status: 302, headers: { location: `http://127.0.0.1:${internal.port}/admin` } }
        : path.startsWith('/to-name')
          ? { status: 307, headers: { location: `http://internal.test:${internal.port}/admin` } }
          : path.startsWith('/to-self')
            ? { status: 302, headers: { location: '/models' } }
            : { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[]}' },
  );
});
afterAll(async () => {
  for (const o of opened) await o.close();
  for (const l of [api, internal]) await new Promise((r) => l.server.close(r));
});

describe('outbound fetch: every connection judged on the address it reaches', () => {
  it('refuses 127.0.0.1 by default, before any connection is made', async () => {
    const before = internal.connections;
    const err = await failure(outbound('').fetchFor('base_url')(`http://127.0.0.1:${internal.port}/v1/models`));
    expect(refusal(err)).toBe(
      'base_url resolves to 127.0.0.1, a loopback address; the operator can allow it with EMEND_OUTBOUND_ALLOW',
    );
    expect((err as OutboundRefused).code).toBe('bad_request');
    expect(internal.connections).toBe(before);
  });

  it.each([
    ['http://[::1]:11434/', 'base_url resolves to ::1, a loopback address'],
    ['http://0.0.0.0:11434/', 'base_url resolves to 0.0.0.0, an unspecified address'],
    ['http://[::ffff:127.0.0.1]:11434/', 'base_url (::ffff:7f00:1) resolves to 127.0.0.1, a loopback address'],
    ['http://2130706433:11434/', 'base_url resolves to 127.0.0.1, a loopback address'],
    ['http://169.254.169.254/latest/meta-data/', 'base_url resolves to 169.254.169.254, a link-local address'],
  ])('refuses the literal address in %s', async (url, words) => {
    expect(refusal(await failure(outbound('').fetchFor('base_url')(url)))).toBe(
      `${words}; the operator can allow it with EMEND_OUTBOUND_ALLOW`,
    );
  });

  it('refuses a host name on the address it resolves to (localhost, and a name the resolver maps to 127.0.0.1)', async () => {
    const before = internal.connections;
    const viaLocalhost = refusal(
      await failure(outbound('').fetchFor('base_url')(`http://localhost:${internal.port}/`)),
    );
    expect(viaLocalhost).toMatch(
      /^base_url \(localhost\) resolves to (127\.0\.0\.1|::1), a loopback address; the operator can allow it with EMEND_OUTBOUND_ALLOW$/,
    );
    const dns = fakeDns({ 'model.test': ['127.0.0.1'] });
    const viaName = refusal(
      await failure(outbound('', dns).fetchFor('base_url')(`http://model.test:${internal.port}/`)),
    );
    expect(viaName).toBe(
      'base_url (model.test) resolves to 127.0.0.1, a loopback address; the operator can allow it with ' +
        'EMEND_OUTBOUND_ALLOW',
    );
    expect(dns.asked).toEqual(['model.test']);
    expect(internal.connections).toBe(before);
  });

  it('reaches what the operator allows: an address and port, a range, a host name', async () => {
    const byAddress = await outbound(`127.0.0.1:${internal.port}`).fetchFor('base_url')(
      `http://127.0.0.1:${internal.port}/`,
    );
    expect(await byAddress.text()).toBe('internal secret');
    const byRange = await outbound('127.0.0.0/8').fetchFor('base_url')(`http://127.0.0.1:${internal.port}/`);
    expect(byRange.status).toBe(200);
    await byRange.body?.cancel();
    const dns = fakeDns({ 'ollama.test': ['127.0.0.1'] });
    const byName = await outbound(`ollama.test:${internal.port}`, dns).fetchFor('base_url')(
      `http://ollama.test:${internal.port}/`,
    );
    expect(await byName.text()).toBe('internal secret');
    // the allowance is for that port only
    const otherPort = await failure(
      outbound(`127.0.0.1:${internal.port}`).fetchFor('base_url')(`http://127.0.0.1:${api.port}/`),
    );
    expect(refusal(otherPort)).toContain('resolves to 127.0.0.1, a loopback address');
  });

  it('judges every redirect hop: an allowed host that redirects to a refused address is refused', async () => {
    const f = outbound(`127.0.0.1:${api.port}`, fakeDns({ 'internal.test': ['127.0.0.1'] })).fetchFor('base_url');
    const before = internal.connections;
    expect(refusal(await failure(f(`http://127.0.0.1:${api.port}/to-internal`)))).toBe(
      'base_url resolves to 127.0.0.1, a loopback address; the operator can allow it with EMEND_OUTBOUND_ALLOW',
    );
    expect(refusal(await failure(f(`http://127.0.0.1:${api.port}/to-name`)))).toBe(
      'base_url (internal.test) resolves to 127.0.0.1, a loopback address; the operator can allow it with ' +
        'EMEND_OUTBOUND_ALLOW',
    );
    expect(internal.connections).toBe(before);
    // a redirect that stays on the allowed host is followed
    const same = await f(`http://127.0.0.1:${api.port}/to-self`);
    expect(await same.json()).toEqual({ data: [] });
  });

  it('DNS rebinding: a name public when saved and 127.0.0.1 when used is refused on the address connected to', async () => {
    const dns = fakeDns({ 'rebind.test': ['93.184.216.34', '127.0.0.1'] });
    const o = outbound('', dns);
    const url = `http://rebind.test:${internal.port}/v1`;
    await expect(o.check('base_url', url)).resolves.toBeUndefined();
    const before = internal.connections;
    expect(refusal(await failure(o.fetchFor('base_url')(`${url}/models`)))).toBe(
      'base_url (rebind.test) resolves to 127.0.0.1, a loopback address; the operator can allow it with ' +
        'EMEND_OUTBOUND_ALLOW',
    );
    expect(internal.connections).toBe(before);
  });

  it(
    'the save-time check: literal and resolved addresses refused, public ones and unresolvable names left to ' +
      'call time',
    async () => {
      const o = outbound('10.1.0.0/16', fakeDns({ 'meta.test': ['169.254.169.254'], 'public.test': ['8.8.8.8'] }));
      await expect(o.check('base_url', 'http://meta.test/v1')).rejects.toThrow(
        'base_url (meta.test) resolves to 169.254.169.254, a link-local address; the operator can allow it with ' +
          'EMEND_OUTBOUND_ALLOW',
      );
      await expect(o.check('base_url', 'http://[fd00::1]:8080/v1')).rejects.toThrow(
        'base_url resolves to fd00::1, a private (unique local, fc00::/7) address',
      );
      await expect(o.check('base_url', 'http://100.64.3.4/v1')).rejects.toThrow(
        'a carrier-grade NAT (100.64.0.0/10) address',
      );
      await expect(o.check('base_url', 'http://10.2.0.1/v1')).rejects.toThrow(
        'base_url resolves to 10.2.0.1, a private (RFC 1918) address',
      );
      await expect(o.check('base_url', 'http://10.1.2.3/v1')).resolves.toBeUndefined();
      await expect(o.check('base_url', 'https://public.test/v1')).resolves.toBeUndefined();
      await expect(o.check('base_url', 'https://nowhere.test/v1')).resolves.toBeUndefined();
    },
  );
});
