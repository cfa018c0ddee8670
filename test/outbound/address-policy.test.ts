import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/error.js';
import { loadConfig } from '../../src/config/config.js';
import { judge, refusedRange } from '../../src/outbound/address-policy.js';

const rulesOf = (allow: string) => loadConfig({ EMEND_OUTBOUND_ALLOW: allow }).outboundAllow;

describe('outbound address policy: which addresses a user-given URL may reach', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.8.9.10', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['169.254.169.254', 'a link-local address'],
    ['fe80::1', 'a link-local address'],
    ['10.1.2.3', 'a private (RFC 1918) address'],
    ['172.16.0.1', 'a private (RFC 1918) address'],
    ['192.168.1.1', 'a private (RFC 1918) address'],
    ['fc00::1', 'a private (unique local, fc00::/7) address'],
    ['fd12:3456::1', 'a private (unique local, fc00::/7) address'],
    ['100.64.0.1', 'a carrier-grade NAT (100.64.0.0/10) address'],
    ['224.0.0.1', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['0.0.0.0', 'an unspecified address'],
    ['::', 'an unspecified address'],
    ['255.255.255.255', 'a broadcast address'],
    ['::ffff:127.0.0.1', 'an IPv4-mapped loopback address'],
    ['::ffff:169.254.169.254', 'an IPv4-mapped link-local address'],
    ['::ffff:10.0.0.1', 'an IPv4-mapped private (RFC 1918) address'],
    ['64:ff9b::a00:1', 'a NAT64 private (RFC 1918) address'],
    ['::7f00:1', 'a deprecated IPv4-compatible address'],
    ['240.0.0.1', 'a reserved address (reserved)'],
  ])('refuses %s: %s', (address, words) => {
    expect(refusedRange(ipaddr.parse(address))).toBe(words);
    expect(judge([], address, 443, address)).toMatchObject({ ok: false, range: expect.any(String) });
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    'lets %s through: a public address',
    (address) => {
      expect(refusedRange(ipaddr.parse(address))).toBeUndefined();
      expect(judge([], address, 443, 'api.example.com')).toEqual({ ok: true });
    },
  );

  it('judges IPv4-mapped addresses as the IPv4 address they carry, for refusals and allowances alike', () => {
    expect(judge([], '::ffff:127.0.0.1', 80, 'h')).toEqual({
      ok: false,
      address: '127.0.0.1',
      range: 'a loopback address',
    });
    expect(judge(rulesOf('127.0.0.1'), '::ffff:127.0.0.1', 80, 'h')).toEqual({ ok: true });
    expect(judge(rulesOf('::ffff:10.0.0.0/104'), '10.9.9.9', 80, 'h')).toEqual({ ok: true });
  });

  it('EMEND_OUTBOUND_ALLOW: ranges, addresses and host names, each optionally for one port', () => {
    const rules = rulesOf(
      '10.0.0.0/8, 127.0.0.1:11434 [::1]:8080,fd00::/8  ollama.internal:11434 gateway.lan, 192.168.1.5',
    );
    expect(rules.map((r) => [r.kind, r.text, r.port])).toEqual([
      ['range', '10.0.0.0/8', undefined],
      ['range', '127.0.0.1:11434', 11434],
      ['range', '[::1]:8080', 8080],
      ['range', 'fd00::/8', undefined],
      ['host', 'ollama.internal:11434', 11434],
      ['host', 'gateway.lan', undefined],
      ['range', '192.168.1.5', undefined],
    ]);
    const ok = (address: string, port: number, host = address) => judge(rules, address, port, host).ok;
    expect(ok('10.200.0.1', 1)).toBe(true);
    expect(ok('11.0.0.1', 1)).toBe(true); // public anyway
    expect(ok('127.0.0.1', 11434)).toBe(true);
    expect(ok('127.0.0.1', 11435)).toBe(false); // that address, another port
    expect(ok('127.0.0.2', 11434)).toBe(false);
    expect(ok('::1', 8080)).toBe(true);
    expect(ok('::1', 80)).toBe(false);
    expect(ok('fd00::5', 443)).toBe(true);
    expect(ok('fc00::5', 443)).toBe(false);
    expect(ok('192.168.1.5', 9)).toBe(true);
    expect(ok('192.168.1.6', 9)).toBe(false);
    // a host rule lets the name through whatever it resolves to; another name at that address is not
    expect(ok('10.9.8.7', 11434, 'Ollama.Internal')).toBe(true);
    expect(ok('172.16.0.9', 11434, 'ollama.internal')).toBe(true);
    expect(ok('172.16.0.9', 80, 'ollama.internal')).toBe(false);
    expect(ok('172.16.0.9', 443, 'gateway.lan')).toBe(true);
    expect(ok('172.16.0.9', 443, 'other.lan')).toBe(false);
    expect(loadConfig({}).outboundAllow).toEqual([]);
  });

  it.each([
    '10.0.0.0/33',
    '127.0.0.1:0',
    '127.0.0.1:99999',
    '1:2:3',
    '[::1',
    '[127.0.0.1]:80',
    'bad_name',
    'http://x',
    '1.2.3',
  ])('refuses the setting %s, naming EMEND_OUTBOUND_ALLOW', (entry) => {
    let err: unknown;
    try {
      rulesOf(entry);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('EMEND_OUTBOUND_ALLOW');
    expect((err as Error).message).toContain(entry);
  });
});
