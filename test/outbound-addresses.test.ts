import assert from 'node:assert/strict';
import type dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { guardedLookup, isPermittedAddress, parseNetworks, DestinationRefusedError } from '../src/adapters/http/outbound-addresses.ts';
import { safeRequest } from '../src/adapters/http/safe-request.ts';
import { ConfigError, loadConfig } from '../src/config.ts';

/*
 * The expectations below are written from the IANA registries, not from the code: the IPv4 and
 * IPv6 Special-Purpose Address Registries, the IPv4 multicast and IPv6 address-space registries
 * (only 2000::/3 is allocated as global unicast), RFC 4291 (IPv4-compatible and -mapped forms),
 * RFC 7915 (IPv4-translated), RFC 6052 / 8215 (NAT64), RFC 3056 (6to4) and RFC 4380 (Teredo).
 * Rule: an address is reachable when it lies outside every special-purpose block; a form that
 * carries an IPv4 address to an IPv4 host (mapped, well-known NAT64, 6to4, Teredo) is judged by
 * that IPv4 address too.
 */
const REFUSED: Array<[string, string]> = [
  ['0.0.0.0', '"this host", 0.0.0.0/8'],
  ['0.1.2.3', '"this network", 0.0.0.0/8'],
  ['10.0.0.1', 'private-use 10/8'],
  ['10.255.255.255', 'private-use 10/8, last'],
  ['100.64.0.1', 'shared address space (CGNAT) 100.64/10'],
  ['100.127.255.254', 'shared address space, last'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback 127/8'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['172.16.0.1', 'private-use 172.16/12'],
  ['172.31.255.255', 'private-use 172.16/12, last'],
  ['192.0.0.8', 'IETF protocol assignments 192.0.0/24'],
  ['192.0.0.170', 'NAT64/DNS64 discovery'],
  ['192.0.2.1', 'documentation TEST-NET-1'],
  ['192.31.196.1', 'AS112-v4'],
  ['192.52.193.1', 'AMT'],
  ['192.88.99.1', 'deprecated 6to4 relay anycast'],
  ['192.168.1.1', 'private-use 192.168/16'],
  ['192.175.48.1', 'direct delegation AS112'],
  ['198.18.0.1', 'benchmarking 198.18/15'],
  ['198.19.255.255', 'benchmarking, last'],
  ['198.51.100.1', 'documentation TEST-NET-2'],
  ['203.0.113.1', 'documentation TEST-NET-3'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast (SSDP)'],
  ['240.0.0.1', 'reserved 240/4'],
  ['255.255.255.255', 'limited broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
  ['::127.0.0.1', 'IPv4-compatible (deprecated, outside 2000::/3)'],
  ['::7f00:1', 'IPv4-compatible, hex'],
  ['::8.8.8.8', 'IPv4-compatible of a public address: still not global unicast'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated'],
  ['::ffff:0:7f00:1', 'IPv4-translated, hex'],
  ['::ffff:0:8.8.8.8', 'IPv4-translated of a public address: not global unicast'],
  ['64:ff9b::7f00:1', 'well-known NAT64 of loopback'],
  ['64:ff9b::a00:1', 'well-known NAT64 of private'],
  ['64:ff9b:1::7f00:1', 'local-use NAT64 (RFC 8215, not globally reachable)'],
  ['64:ff9b:1::808:808', 'local-use NAT64, whatever it embeds'],
  ['100::1', 'discard-only 100::/64'],
  ['1::1', 'reserved by IETF (outside 2000::/3)'],
  ['4000::1', 'reserved by IETF (outside 2000::/3)'],
  ['2001:db8::1', 'documentation 2001:db8::/32'],
  ['3fff::1', 'documentation 3fff::/20'],
  ['2001:2::1', 'benchmarking 2001:2::/48'],
  ['2001:10::1', 'deprecated ORCHID'],
  ['2001:20::1', 'ORCHIDv2'],
  ['2620:4f:8000::1', 'AS112-v6'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo (RFC 4380 example) whose client is 192.0.2.45, documentation'],
  ['2001:0:a00:1::fefe:fefe', 'Teredo whose server is 10.0.0.1'],
  ['2001:0:808:808::f5ff:fffe', 'Teredo whose client is 10.0.0.1 (obfuscated)'],
  ['2002:7f00:1::1', '6to4 of loopback'],
  ['2002:a00:1::1', '6to4 of private'],
  ['2002:c000:201::1', '6to4 of documentation'],
  ['5f00::1', 'SRv6 SIDs 5f00::/16'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%1', 'link-local with a zone'],
  ['fec0::1', 'deprecated site-local'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast, global scope'],
  ['example.com', 'not an address'],
  ['', 'nothing'],
];

const ALLOWED: Array<[string, string]> = [
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['9.255.255.255', 'just below 10/8'],
  ['11.0.0.0', 'just above 10/8'],
  ['100.63.255.255', 'just below 100.64/10'],
  ['100.128.0.0', 'just above 100.64/10'],
  ['126.255.255.255', 'just below 127/8'],
  ['128.0.0.0', 'just above 127/8'],
  ['172.15.255.255', 'just below 172.16/12'],
  ['172.32.0.0', 'just above 172.16/12'],
  ['192.0.1.1', 'between 192.0.0/24 and 192.0.2/24'],
  ['192.167.255.255', 'just below 192.168/16'],
  ['192.169.0.0', 'just above 192.168/16'],
  ['198.17.255.255', 'just below 198.18/15'],
  ['198.20.0.0', 'just above 198.18/15'],
  ['223.255.255.255', 'just below multicast'],
  ['2606:4700:4700::1111', 'global unicast'],
  ['2001:4860:4860::8888', 'global unicast beside 2001::/23'],
  ['2a00:1450:4001::1', 'global unicast'],
  ['3ffe::1', 'global unicast, top of 2000::/3 below 3fff::/20'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ['64:ff9b::808:808', 'well-known NAT64 of a public address'],
  ['2002:808:808::1', '6to4 of a public address'],
  ['2001:0:808:808::fefe:fefe', 'Teredo, server 8.8.8.8, client 1.1.1.1'],
];

describe('outbound address rules', () => {
  test('special-purpose addresses are refused, global unicast is allowed', () => {
    for (const [address, why] of REFUSED) assert.equal(isPermittedAddress(address, []), false, `${address} (${why}) must be refused`);
    for (const [address, why] of ALLOWED) assert.equal(isPermittedAddress(address, []), true, `${address} (${why}) must be allowed`);
  });

  test('the allow-list exempts exactly its networks', () => {
    const allowed = parseNetworks('127.0.0.1/32, 10.2.0.0/16,fd00:1::/32, 192.0.2.7');
    const cases: Array<[string, boolean]> = [
      ['127.0.0.1', true], ['::ffff:127.0.0.1', true], ['127.0.0.2', false], ['::1', false],
      ['::7f00:1', false], ['::ffff:0:7f00:1', false], ['64:ff9b:1::7f00:1', false], ['64:ff9b::7f00:1', false],
      ['10.2.0.0', true], ['10.2.255.255', true], ['10.1.255.255', false], ['10.3.0.0', false],
      ['fd00:1::1', true], ['fd00:1:ffff::1', true], ['fd00:2::1', false], ['fd00::1', false],
      ['192.0.2.7', true], ['192.0.2.8', false],
      ['8.8.8.8', true],
    ];
    for (const [address, expected] of cases) assert.equal(isPermittedAddress(address, allowed), expected, address);
    assert.deepEqual(parseNetworks(''), []);
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/8/1', 'example.com', '10.0.0/8', '0x7f.1', '10.0.0.0/-1', '10.0.0.0/x', '::1/']) {
      assert.throws(() => parseNetworks(bad), /not an IP network/, bad);
    }
  });

  test('ALLOWED_NETWORKS, or its alias TOOL_ALLOWED_NETWORKS, is parsed once into config', () => {
    const base = { DATA_DIR: '/tmp/unused', JWT_SECRET: 'x'.repeat(32) };
    assert.deepEqual(loadConfig(base).allowedNetworks, []);
    for (const name of ['ALLOWED_NETWORKS', 'TOOL_ALLOWED_NETWORKS']) {
      const { allowedNetworks } = loadConfig({ ...base, [name]: '10.9.0.0/16,fd00::/8' });
      assert.equal(allowedNetworks.length, 2, name);
      assert.equal(allowedNetworks.map(([network, prefix]) => `${network.toString()}/${prefix}`).join(','), '10.9.0.0/16,fd00::/8', name);
      assert.equal(isPermittedAddress('10.9.8.7', allowedNetworks), true, name);
      assert.equal(isPermittedAddress('10.10.0.1', allowedNetworks), false, name);
    }
    assert.equal(loadConfig({ ...base, ALLOWED_NETWORKS: '10.9.0.0/16', TOOL_ALLOWED_NETWORKS: '10.9.0.0/16' }).allowedNetworks.length, 1);
    assert.throws(() => loadConfig({ ...base, ALLOWED_NETWORKS: '10.9.0.0/16', TOOL_ALLOWED_NETWORKS: '10.8.0.0/16' }), ConfigError);
    assert.throws(() => loadConfig({ ...base, ALLOWED_NETWORKS: '10.9.0.0/40' }), (err: Error) => err instanceof ConfigError && /ALLOWED_NETWORKS/.test(err.message));
    assert.throws(() => loadConfig({ ...base, TOOL_ALLOWED_NETWORKS: 'intranet' }), (err: Error) => err instanceof ConfigError && /TOOL_ALLOWED_NETWORKS/.test(err.message));
  });
});

/** A resolver answering from a table, as a DNS server under someone else's control would. */
function resolverOf(answers: Record<string, string[]>) {
  return (hostname: string, _options: dns.LookupAllOptions, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => {
    const list = answers[hostname] ?? [];
    callback(null, list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

function lookupOnce(lookup: ReturnType<typeof guardedLookup>, hostname: string, all: boolean): Promise<unknown> {
  return new Promise((resolve, reject) => {
    lookup(hostname, { all }, (err: Error | null, address: unknown, family?: number) => (err ? reject(err) : resolve(all ? address : { address, family })));
  });
}

describe('names resolving to refused addresses', () => {
  let server: http.Server;
  let port: number;
  let hits = 0;
  before(async () => {
    server = http.createServer((_req, res) => { hits++; res.end('reached'); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test('a name is refused when any answer is not permitted, whatever its other answers', async () => {
    const lookup = guardedLookup([], resolverOf({
      'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      'rebind.test': ['93.184.215.14', '127.0.0.1'],
      'translated.test': ['::ffff:0:7f00:1'],
      'nat64.test': ['64:ff9b:1::7f00:1'],
      'empty.test': [],
    }));
    assert.deepEqual(await lookupOnce(lookup, 'public.test', false), { address: '93.184.215.14', family: 4 });
    assert.equal((await lookupOnce(lookup, 'public.test', true) as unknown[]).length, 2);
    for (const name of ['rebind.test', 'translated.test', 'nat64.test', 'empty.test']) {
      await assert.rejects(lookupOnce(lookup, name, true), DestinationRefusedError, name);
      await assert.rejects(lookupOnce(lookup, name, false), DestinationRefusedError, name);
    }
  });

  test('the connection resolves through the guard: localhost is refused unless allowed', async () => {
    const options = { method: 'GET', timeoutMs: 2000, maxBodyBytes: 100 };
    await assert.rejects(safeRequest(`http://localhost:${port}/`, { ...options, allowedNetworks: [] }), DestinationRefusedError);
    await assert.rejects(safeRequest(`http://127.0.0.1:${port}/`, { ...options, allowedNetworks: [] }), DestinationRefusedError);
    assert.equal(hits, 0);
    const res = await safeRequest(`http://localhost:${port}/`, { ...options, allowedNetworks: parseNetworks('127.0.0.0/8,::1/128') });
    assert.equal(res.body.toString(), 'reached');
    assert.equal(hits, 1);
  });
});
