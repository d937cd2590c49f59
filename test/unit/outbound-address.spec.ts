import { AppConfig, ConfigError } from '../../src/core/config/app-config.js';
import {
  blockedRange,
  checkUrl,
  NOTHING_ALLOWED,
  OUTBOUND_REFUSED,
  OutboundRefused,
  parseOutboundAllowList,
  pinHost,
  pinUrl,
  urlHost,
  type HostLookup,
  type OutboundRefusal,
} from '../../src/core/net/outbound-address.js';

/** A resolver of fixed answers; names it does not know do not resolve. Counts its questions. */
function fakeDns(answers: Record<string, string[]>): HostLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = (name: string) => {
    asked.push(name);
    const found = answers[name];
    if (!found) {
      return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' }));
    }
    return Promise.resolve(found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
  return Object.assign(lookup, { asked });
}

const PUBLIC_DNS = {
  'github.com': ['140.82.121.3'],
  'dual.example.com': ['140.82.121.4', '2606:50c0:8000::153'],
  'rebind.example.com': ['140.82.121.5', '10.0.0.7'],
  'loopback.example.com': ['127.0.0.1'],
  'mapped.example.com': ['::ffff:169.254.169.254'],
  'git.corp.example': ['10.1.2.3'],
  'metadata.google.internal': ['169.254.169.254'],
};

async function refusal(promise: Promise<unknown>): Promise<OutboundRefusal | 'accepted'> {
  try {
    await promise;
    return 'accepted';
  } catch (err) {
    if (err instanceof OutboundRefused) return err.reason;
    throw err;
  }
}

describe('the outbound address rule (core/net)', () => {
  const policy = { allow: NOTHING_ALLOWED, lookup: fakeDns(PUBLIC_DNS) };

  describe('addresses', () => {
    it.each([
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['10.0.0.1', 'private'],
      ['172.16.5.4', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'linkLocal'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['100.100.100.200', 'carrierGradeNat'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified'],
      ['255.255.255.255', 'broadcast'],
      ['192.0.2.1', 'reserved'],
      ['198.51.100.7', 'reserved'],
      ['203.0.113.9', 'reserved'],
      ['240.0.0.1', 'reserved'],
      ['192.0.0.170', 'reserved'],
      ['198.18.0.1', 'benchmarking'],
      ['::1', 'loopback'],
      ['::', 'unspecified'],
      ['fe80::1', 'linkLocal'],
      ['fc00::1', 'uniqueLocal'],
      ['fd12:3456::1', 'uniqueLocal'],
      ['ff02::1', 'multicast'],
      ['::ffff:127.0.0.1', 'ipv4Mapped of loopback'],
      ['::ffff:7f00:1', 'ipv4Mapped of loopback'],
      ['::ffff:169.254.169.254', 'ipv4Mapped of linkLocal'],
      ['::ffff:0:10.0.0.1', 'rfc6145 of private'],
      ['64:ff9b::a9fe:a9fe', 'rfc6052 of linkLocal'],
      ['64:ff9b::127.0.0.1', 'rfc6052 of loopback'],
      ['2002:7f00:1::1', '6to4 of loopback'],
      ['2002:c0a8:101::1', '6to4 of private'],
      ['2001::1', 'teredo'],
      ['2001:db8::1', 'reserved'],
      ['2001:10::1', 'reserved'],
      ['::127.0.0.1', 'reserved'],
      ['64:ff9b:1::1', 'reserved'],
      ['fec0::1', 'reserved'],
      ['100::1', 'reserved'],
      ['[::1]', 'loopback'],
    ])('%s is refused (%s)', (address, range) => {
      expect(blockedRange(address)).toBe(range);
    });

    it.each([
      '140.82.121.3',
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '100.128.0.1',
      '169.255.0.1',
      '2606:50c0:8000::153',
      '2a00:1450:4001:80b::200e',
      '::ffff:140.82.121.3',
      '64:ff9b::8c52:7903',
      '2002:8c52:7903::1',
    ])('%s is public', (address) => {
      expect(blockedRange(address)).toBeNull();
    });
  });

  describe('hosts of URLs', () => {
    it.each([
      ['https://2130706433/x.git', '127.0.0.1'],
      ['https://0x7f.1/x.git', '127.0.0.1'],
      ['https://0177.0.0.1/x.git', '127.0.0.1'],
      ['https://127.1/x.git', '127.0.0.1'],
      ['https://127.0.0.1./x.git', '127.0.0.1'],
      ['https://0x7f000001/x.git', '127.0.0.1'],
      ['https://[::ffff:127.0.0.1]/x.git', '::ffff:7f00:1'],
      ['https://[0:0:0:0:0:0:0:1]:8443/x.git', '::1'],
      ['ssh://git@2130706433/x.git', '127.0.0.1'],
      ['ssh://%31%32%37.0.0.1/x.git', '127.0.0.1'],
      ['git://0x7f.0.0.1/x.git', '127.0.0.1'],
      ['https://GitHub.COM/acme/x.git', 'github.com'],
    ])('%s is read as host %s', (url, host) => {
      expect(urlHost(url).host).toBe(host);
    });

    it('gives each scheme its default port unless the URL names one', () => {
      expect(urlHost('https://github.com/x').port).toBe(443);
      expect(urlHost('http://github.com/x').port).toBe(80);
      expect(urlHost('ssh://git@github.com/x').port).toBe(22);
      expect(urlHost('git://github.com/x').port).toBe(9418);
      expect(urlHost('https://github.com:8443/x').port).toBe(8443);
    });

    it.each([
      ['https:///x', 'no-host'],
      ['https:///', 'no-host'],
      ['https://user@/x', 'no-host'],
      ['https://:443/x', 'no-host'],
      ['ssh:///x', 'no-host'],
      ['github.com/acme/x.git', 'no-host'],
      ['https://evil.test\\@127.0.0.1/x', 'invalid-host'],
      ['https://github.com./x.git', 'invalid-host'],
      ['https://[::1%25eth0]/x', 'invalid-host'],
      ['https://1.2.3.4.5/x', 'invalid-host'],
    ])('%s is refused (%s)', async (url, reason) => {
      expect(await refusal(pinUrl(url, policy))).toBe(reason);
      expect(await refusal(checkUrl(url, policy))).toBe(reason);
    });
  });

  describe('checks', () => {
    it.each([
      'https://127.0.0.1/x.git',
      'https://[::1]/x.git',
      'https://2130706433/x.git',
      'https://0x7f.1/x.git',
      'https://169.254.169.254/latest/meta-data',
      'https://[::ffff:127.0.0.1]/x.git',
      'https://[::ffff:a9fe:a9fe]/x.git',
      'https://[64:ff9b::a9fe:a9fe]/x.git',
      'https://10.0.0.1/x.git',
      'https://100.64.0.1/x.git',
      'https://[fd00::1]/x.git',
      'https://[fe80::1]/x.git',
      'https://0.0.0.0/x.git',
      'https://224.0.0.1/x.git',
      'ssh://git@192.168.0.1/x.git',
      'git://[::1]/x.git',
    ])('refuses the address of %s, resolving nothing', async (url) => {
      const lookup = fakeDns(PUBLIC_DNS);
      expect(await refusal(pinUrl(url, { allow: NOTHING_ALLOWED, lookup }))).toBe('blocked-address');
      expect(lookup.asked).toEqual([]);
    });

    it.each(['metadata.google.internal', 'metadata', 'instance-data', 'metadata.goog', 'anything.internal'])(
      'refuses the metadata name %s, resolving nothing',
      async (host) => {
        const lookup = fakeDns(PUBLIC_DNS);
        expect(await refusal(pinHost(host, 443, { allow: NOTHING_ALLOWED, lookup }))).toBe('metadata-name');
        expect(lookup.asked).toEqual([]);
      },
    );

    it('refuses a name when any of its addresses is refused, and one that does not resolve', async () => {
      expect(await refusal(pinHost('loopback.example.com', 443, policy))).toBe('blocked-address');
      expect(await refusal(pinHost('rebind.example.com', 443, policy))).toBe('blocked-address');
      expect(await refusal(pinHost('mapped.example.com', 443, policy))).toBe('blocked-address');
      expect(await refusal(pinHost('nowhere.example.com', 443, policy))).toBe('unresolvable');
    });

    it('resolves a public name once and pins its first address', async () => {
      const lookup = fakeDns(PUBLIC_DNS);
      expect(await pinUrl('https://github.com/acme/x.git', { allow: NOTHING_ALLOWED, lookup })).toEqual({
        host: 'github.com',
        port: 443,
        address: '140.82.121.3',
        family: 4,
      });
      expect(await pinHost('dual.example.com', 22, { allow: NOTHING_ALLOWED, lookup })).toEqual({
        host: 'dual.example.com',
        port: 22,
        address: '140.82.121.4',
        family: 4,
      });
      expect(lookup.asked).toEqual(['github.com', 'dual.example.com']);
    });

    it('resolves names with the system resolver by default: localhost is loopback', async () => {
      expect(await refusal(pinUrl('https://localhost/x.git', { allow: NOTHING_ALLOWED }))).toBe(
        'blocked-address',
      );
      expect(await refusal(pinUrl('https://nowhere.invalid/x.git', { allow: NOTHING_ALLOWED }))).toBe(
        'unresolvable',
      );
    });

    it('says the same to the tenant whatever the host was; the detail is for operators', async () => {
      const messages = new Set<string>();
      for (const url of [
        'https://127.0.0.1/x',
        'https://metadata.google.internal/x',
        'https://nowhere.example.com/x',
        'https://rebind.example.com/x',
      ]) {
        const err = await pinUrl(url, policy).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OutboundRefused);
        messages.add((err as OutboundRefused).message);
        expect((err as OutboundRefused).detail).not.toBe('');
      }
      expect([...messages]).toEqual([OUTBOUND_REFUSED]);
    });
  });

  describe('the allow-list (OUTBOUND_ALLOWED_HOSTS)', () => {
    const allow = parseOutboundAllowList(
      ' git.corp.example, *.svc.example, 127.0.0.2 ,10.8.0.0/16, [fd00::5], fd01::/64 ',
    );

    it('reads names, *.suffixes, addresses and CIDR ranges; empty or unset opens nothing', () => {
      expect(allow.names).toEqual(['git.corp.example']);
      expect(allow.suffixes).toEqual(['.svc.example']);
      expect(allow.ranges.map(([ip, bits]) => `${ip.toString()}/${bits}`)).toEqual([
        '127.0.0.2/32',
        '10.8.0.0/16',
        'fd00::5/128',
        'fd01::/64',
      ]);
      expect(parseOutboundAllowList(undefined)).toEqual(NOTHING_ALLOWED);
      expect(parseOutboundAllowList(' ')).toEqual(NOTHING_ALLOWED);
    });

    it('refuses entries that are none of those, at start-up, naming the variable', () => {
      const read = (value: string) =>
        new AppConfig('worker', { NODE_ENV: 'test', OUTBOUND_ALLOWED_HOSTS: value }).outboundAllowList;
      for (const bad of ['https://git.example', '10.0.0.0/33', '*', '*.', 'a b', '1.2.3.4.5', 'x/y']) {
        expect(() => read(bad)).toThrow(ConfigError);
        expect(() => read(bad)).toThrow(/OUTBOUND_ALLOWED_HOSTS/);
      }
      expect(read('127.0.0.2').ranges).toHaveLength(1);
    });

    it('opens the addresses and ranges it lists, and only those', async () => {
      const lookup = fakeDns({ 'git.svc.example': ['10.9.0.1'], 'other.example.com': ['10.8.3.4'] });
      const p = { allow, lookup };
      expect((await pinUrl('https://127.0.0.2:8443/x', p)).address).toBe('127.0.0.2');
      expect((await pinUrl('https://[::ffff:127.0.0.2]/x', p)).address).toBe('::ffff:7f00:2');
      expect((await pinUrl('https://10.8.200.1/x', p)).address).toBe('10.8.200.1');
      expect((await pinUrl('https://[fd00::5]/x', p)).address).toBe('fd00::5');
      expect((await pinUrl('https://[fd01::9]/x', p)).address).toBe('fd01::9');
      // A name resolving into an opened range is taken too.
      expect((await pinUrl('https://other.example.com/x', p)).address).toBe('10.8.3.4');
      for (const url of [
        'https://127.0.0.1/x',
        'https://10.9.0.1/x',
        'https://[fd00::6]/x',
        'https://[::1]/x',
      ]) {
        expect({ url, reason: await refusal(pinUrl(url, p)) }).toEqual({ url, reason: 'blocked-address' });
      }
    });

    it('opens the names it lists (and those below a *.suffix) whatever they resolve to', async () => {
      const lookup = fakeDns({
        'git.corp.example': ['10.1.2.3'],
        'git.svc.example': ['10.9.0.1'],
        'svc.example': ['10.9.0.2'],
        'a.git.corp.example': ['10.1.2.4'],
      });
      const p = { allow, lookup };
      expect((await pinUrl('https://git.corp.example/x', p)).address).toBe('10.1.2.3');
      expect((await pinUrl('https://GIT.svc.example/x', p)).address).toBe('10.9.0.1');
      expect(await refusal(pinUrl('https://svc.example/x', p))).toBe('blocked-address');
      expect(await refusal(pinUrl('https://a.git.corp.example/x', p))).toBe('blocked-address');
    });

    it('takes an opened name when saved without resolving it; it is resolved when connecting', async () => {
      const lookup = fakeDns({ 'git.corp.example': ['10.1.2.3'] });
      const p = { allow: parseOutboundAllowList('git.corp.example,*.gitlab.example.com'), lookup };
      expect((await checkUrl('https://code.gitlab.example.com/acme/x.git', p)).host).toBe(
        'code.gitlab.example.com',
      );
      expect(lookup.asked).toEqual([]);
      expect(await refusal(pinUrl('https://code.gitlab.example.com/acme/x.git', p))).toBe('unresolvable');
      expect((await pinUrl('https://git.corp.example/x', p)).address).toBe('10.1.2.3');
      // A name not opened is resolved when saved, and refused.
      expect(await refusal(checkUrl('https://gitlab.example.com/x', p))).toBe('unresolvable');
    });

    it('opens a metadata name only when listed by name', async () => {
      const lookup = fakeDns(PUBLIC_DNS);
      expect(
        await refusal(
          pinHost('metadata.google.internal', 80, {
            allow: parseOutboundAllowList('169.254.0.0/16'),
            lookup,
          }),
        ),
      ).toBe('metadata-name');
      expect(
        (
          await pinHost('metadata.google.internal', 80, {
            allow: parseOutboundAllowList('metadata.google.internal'),
            lookup,
          })
        ).address,
      ).toBe('169.254.169.254');
    });
  });
});
