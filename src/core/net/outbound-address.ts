import dns from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * The one rule for connections this service opens to an address a tenant chose (a dbt
 * repository, an OAuth token endpoint): never into the platform's own network.
 *
 * A host is refused when it is, or resolves to, an address outside the public unicast space
 * (loopback, RFC 1918 private, link-local with the cloud metadata address, unique-local,
 * carrier-grade NAT, multicast, unspecified, broadcast, documentation and other reserved ranges,
 * and IPv6 forms embedding one of those: IPv4-mapped, IPv4-translated, NAT64, 6to4, Teredo), or
 * when it is a known metadata name. Hosts are read as the WHATWG URL parser reads them, so
 * `2130706433`, `0x7f.1` and `[::ffff:127.0.0.1]` are the addresses they stand for. A name is
 * resolved once, every address it has is checked, and the caller connects to the address
 * returned ({@link PinnedAddress}), so a DNS answer that changes after the check cannot redirect
 * the connection. The operator opens specific hosts, suffixes, addresses or ranges with an
 * allow-list (`OUTBOUND_ALLOWED_HOSTS`).
 *
 * Framework-free: no Nest, no configuration read here.
 */

/** Why a host was refused; for logs and tests. What a tenant reads is {@link OUTBOUND_REFUSED}. */
export type OutboundRefusal =
  'no-host' | 'invalid-host' | 'metadata-name' | 'blocked-address' | 'unresolvable';

/**
 * The reason given to a tenant, whatever it was about the host: the same words for a name that
 * does not resolve, resolves to a private address or is a metadata name, so the answer says
 * nothing of the network behind the service.
 */
export const OUTBOUND_REFUSED =
  'names a host this service does not connect to: hosts that are, or resolve to, loopback, private, ' +
  'link-local or other reserved addresses, cloud metadata names and names that do not resolve to a ' +
  'public address are refused (the operator can open some with OUTBOUND_ALLOWED_HOSTS)';

/** A host refused by the rule. `detail` is for operators' logs; `message` for anyone. */
export class OutboundRefused extends Error {
  constructor(
    readonly reason: OutboundRefusal,
    readonly detail: string,
  ) {
    super(
      reason === 'no-host'
        ? 'has no host'
        : reason === 'invalid-host'
          ? `has a host that is not a valid host name or address`
          : OUTBOUND_REFUSED,
    );
  }
}

/** What the operator opened (`OUTBOUND_ALLOWED_HOSTS`): names, `*.suffix` patterns, addresses, ranges. */
export interface OutboundAllowList {
  readonly names: readonly string[];
  /** `.example.com` for `*.example.com`: hosts below it, not the domain itself. */
  readonly suffixes: readonly string[];
  readonly ranges: readonly (readonly [ipaddr.IPv4 | ipaddr.IPv6, number])[];
}

export const NOTHING_ALLOWED: OutboundAllowList = { names: [], suffixes: [], ranges: [] };

/** How a name is resolved: every address it has. */
export type HostLookup = (name: string) => Promise<{ address: string; family: number }[]>;

export interface OutboundPolicy {
  allow: OutboundAllowList;
  /** Default: `dns.lookup` with `all: true` (what git, curl and ssh would use), bounded in time. */
  lookup?: HostLookup;
}

/** Where to connect: the host as the URL names it (normalised) and the one address checked for it. */
export interface PinnedAddress {
  /** Lower-case name, dotted-quad IPv4 or IPv6 without brackets. */
  host: string;
  port: number;
  address: string;
  family: 4 | 6;
}

/** The host and port a URL connects to, read as the WHATWG parser reads special URLs. */
export interface UrlHost {
  scheme: string;
  /** Lower-case name, dotted-quad IPv4 or IPv6 without brackets. */
  host: string;
  port: number;
  /** The address when the host is one. */
  ip: ipaddr.IPv4 | ipaddr.IPv6 | null;
}

/** Names of metadata services (and the whole `.internal` domain, which clouds use for theirs). */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
  'metadata.packet.net',
  'metadata.platformequinix.com',
]);

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443, ssh: 22, git: 9418, ws: 80, wss: 443 };

const LOOKUP_TIMEOUT_MS = 5_000;

const LABEL = '[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?';
const HOST_NAME = new RegExp(`^${LABEL}(\\.${LABEL})*$`);

/** IPv4 ranges beyond ipaddr.js's own (`reserved` there already holds 192.0.0.0/24, the documentation nets, 192.88.99.0/24 and 240/4). */
const EXTRA_V4: [string, ipaddr.IPv4, number][] = [['benchmarking', ipaddr.IPv4.parse('198.18.0.0'), 15]];
/** The IPv6 global unicast space (2000::/3): anything outside it is refused unless it embeds a public IPv4. */
const GLOBAL_UNICAST: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];
/** IETF protocol assignments (2001::/23: Teredo, ORCHID, benchmarking, ...). */
const IETF_PROTOCOL: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2001::'), 23];

const v4OfLast32 = (v6: ipaddr.IPv6) =>
  new ipaddr.IPv4([v6.parts[6] >> 8, v6.parts[6] & 0xff, v6.parts[7] >> 8, v6.parts[7] & 0xff]);

/**
 * The special range an address is in (`loopback`, `private`, `linkLocal`, ...), or null for a
 * public unicast address. IPv6 forms that embed an IPv4 address are judged by that address.
 */
export function blockedRange(address: string | ipaddr.IPv4 | ipaddr.IPv6): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  if (typeof address === 'string') {
    const parsed = parseIp(address.replace(/^\[(.*)\]$/, '$1'));
    if (!parsed) return 'invalid';
    ip = parsed;
  } else {
    ip = address;
  }
  if (ip.kind() === 'ipv4') {
    const v4 = ip as ipaddr.IPv4;
    const range = v4.range();
    if (range !== 'unicast') return range;
    const extra = EXTRA_V4.find(([, net, bits]) => v4.match(net, bits));
    return extra ? extra[0] : null;
  }
  const v6 = ip as ipaddr.IPv6;
  if (v6.zoneId !== undefined) return 'scoped';
  const range = v6.range();
  switch (range) {
    case 'ipv4Mapped':
      return embedded(v6.toIPv4Address(), range);
    case 'rfc6145': // ::ffff:0:a.b.c.d
    case 'rfc6052': // 64:ff9b::a.b.c.d (NAT64)
      return embedded(v4OfLast32(v6), range);
    case '6to4': // 2002:AABB:CCDD::/48
      return embedded(
        new ipaddr.IPv4([v6.parts[1] >> 8, v6.parts[1] & 0xff, v6.parts[2] >> 8, v6.parts[2] & 0xff]),
        range,
      );
    case 'unicast':
      if (!v6.match(GLOBAL_UNICAST)) return 'reserved';
      if (v6.match(IETF_PROTOCOL)) return 'reserved';
      return null;
    default:
      return range;
  }
}

/**
 * An address in any text form: ipaddr.js's, or IPv6 with an embedded dotted IPv4 in any position
 * (`64:ff9b::127.0.0.1`), which ipaddr.js 1.x reads only after `::ffff:` and WHATWG reads always.
 */
function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (ipaddr.isValid(text)) return ipaddr.parse(text);
  if (!text.includes(':') || text.includes('%')) return null;
  try {
    const hostname = new URL(`http://[${text}]/`).hostname;
    return ipaddr.IPv6.parse(hostname.slice(1, -1));
  } catch {
    return null;
  }
}

function embedded(v4: ipaddr.IPv4, form: string): string | null {
  const inner = blockedRange(v4);
  return inner === null ? null : `${form} of ${inner}`;
}

/**
 * A host as a URL's parser reads it: IPv4 in any form WHATWG takes (`2130706433`, `0x7f.1`,
 * `0177.0.0.1`, `127.1`) becomes dotted quad, IPv6 loses its brackets, a name is lower-cased and
 * IDNA-encoded. Null for text that is not a host. A name ending in a dot is refused: git, curl and
 * the resolver do not all treat it alike.
 */
export function normaliseHost(raw: string): { host: string; ip: ipaddr.IPv4 | ipaddr.IPv6 | null } | null {
  if (raw === '') return null;
  if (raw.startsWith('[') || raw.includes(':')) {
    const inner = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
    const ip = inner.includes(':') ? parseIp(inner) : null;
    return ip && ip.kind() === 'ipv6' ? { host: ip.toString(), ip } : null;
  }
  // Nothing that would change how the text below is read as a URL.
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f/\\?#@:[\]]/.test(raw)) return null;
  let hostname: string;
  try {
    hostname = new URL(`http://${raw}/`).hostname;
  } catch {
    return null;
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname))
    return { host: hostname, ip: ipaddr.IPv4.parse(hostname) };
  if (hostname.endsWith('.') || !HOST_NAME.test(hostname)) return null;
  return { host: hostname, ip: null };
}

/**
 * The host and port of an absolute URL (`scheme://authority/...`), however its scheme is parsed:
 * `ssh://` and `git://` hosts are read with the rules of `https://` hosts, so a numeric form
 * cannot slip through as an opaque name. Refuses (`OutboundRefused`) a URL without a host
 * (`https:///x`, which WHATWG would read as host `x`) and a host that is not one.
 */
export function urlHost(raw: string): UrlHost {
  const head = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)/i.exec(raw);
  if (!head) throw new OutboundRefused('no-host', 'not of the form scheme://host/...');
  const scheme = head[1].toLowerCase();
  const authority = head[2];
  if (authority.includes('\\')) throw new OutboundRefused('invalid-host', 'a backslash in the authority');
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  if (hostPort === '' || hostPort.startsWith(':')) throw new OutboundRefused('no-host', 'an empty authority');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefused('invalid-host', 'not a URL');
  }
  if (url.hostname === '') throw new OutboundRefused('no-host', 'an empty host');
  const host = normaliseHost(url.hostname);
  if (!host) throw new OutboundRefused('invalid-host', `host ${JSON.stringify(url.hostname)}`);
  const port = url.port !== '' ? Number(url.port) : DEFAULT_PORTS[scheme];
  if (port === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new OutboundRefused('invalid-host', `no port for ${scheme}`);
  }
  return { scheme, host: host.host, port, ip: host.ip };
}

/**
 * `OUTBOUND_ALLOWED_HOSTS`: comma-separated host names, `*.suffix` patterns (hosts below the
 * suffix), addresses and CIDR ranges. Throws an Error naming the entries that are none of these.
 */
export function parseOutboundAllowList(value: string | undefined): OutboundAllowList {
  if (value === undefined || value.trim() === '') return NOTHING_ALLOWED;
  const names: string[] = [];
  const suffixes: string[] = [];
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  const bad: string[] = [];
  for (const entry of value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const bare = entry.replace(/^\[(.*)\]$/, '$1');
    if (bare.includes('/')) {
      try {
        ranges.push(ipaddr.parseCIDR(bare));
      } catch {
        bad.push(entry);
      }
    } else if (
      ipaddr.IPv4.isValidFourPartDecimal(bare) ||
      (bare.includes(':') && ipaddr.IPv6.isValid(bare))
    ) {
      const ip = ipaddr.parse(bare);
      ranges.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
    } else if (entry.startsWith('*.') && HOST_NAME.test(entry.slice(2).toLowerCase())) {
      suffixes.push(entry.slice(1).toLowerCase());
    } else if (HOST_NAME.test(entry.toLowerCase()) && !/^[0-9.]+$/.test(entry)) {
      names.push(entry.toLowerCase());
    } else {
      bad.push(entry);
    }
  }
  if (bad.length > 0) {
    throw new Error(
      `${bad.join(', ')} is not a host name, *.suffix, IP address or CIDR range (for example git.internal.example,*.corp.example,10.1.2.3,10.8.0.0/16)`,
    );
  }
  return { names, suffixes, ranges };
}

function nameAllowed(host: string, allow: OutboundAllowList): boolean {
  return allow.names.includes(host) || allow.suffixes.some((s) => host.endsWith(s) && host.length > s.length);
}

function addressAllowed(ip: ipaddr.IPv4 | ipaddr.IPv6, allow: OutboundAllowList): boolean {
  const candidates: (ipaddr.IPv4 | ipaddr.IPv6)[] = [ip];
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
    candidates.push((ip as ipaddr.IPv6).toIPv4Address());
  }
  return allow.ranges.some(([net, bits]) =>
    candidates.some((c) => c.kind() === net.kind() && (c as ipaddr.IPv4).match(net as ipaddr.IPv4, bits)),
  );
}

/** Refuses an address outside the public space unless the allow-list opens it. */
function checkAddress(ip: ipaddr.IPv4 | ipaddr.IPv6, allow: OutboundAllowList, of: string): void {
  const range = blockedRange(ip);
  if (range !== null && !addressAllowed(ip, allow)) {
    throw new OutboundRefused('blocked-address', `${of} is ${ip.toString()} (${range})`);
  }
}

function isMetadataName(host: string): boolean {
  return METADATA_NAMES.has(host) || host.endsWith('.internal') || host === 'internal';
}

const systemLookup: HostLookup = async (name) => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      dns.promises.lookup(name, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('lookup timed out')), LOOKUP_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
};

async function resolveChecked(host: string, policy: OutboundPolicy): Promise<ipaddr.IPv4 | ipaddr.IPv6> {
  let found: { address: string; family: number }[];
  try {
    found = await (policy.lookup ?? systemLookup)(host);
  } catch (err) {
    throw new OutboundRefused('unresolvable', `${host} does not resolve (${(err as Error).message})`);
  }
  const ips = found.map((f) => f.address).filter((a) => ipaddr.isValid(a));
  if (ips.length === 0) throw new OutboundRefused('unresolvable', `${host} has no address`);
  const parsed = ips.map((a) => ipaddr.parse(a));
  if (!nameAllowed(host, policy.allow)) {
    for (const ip of parsed) checkAddress(ip, policy.allow, `${host} resolves to an address that`);
  }
  return parsed[0];
}

function pinnedOf(host: string, port: number, ip: ipaddr.IPv4 | ipaddr.IPv6): PinnedAddress {
  return { host, port, address: ip.toString(), family: ip.kind() === 'ipv4' ? 4 : 6 };
}

/**
 * Checks a host (normalised, {@link normaliseHost}) before a connection and returns the address to
 * connect to. An address is checked as it is; a metadata name is refused; any other name is
 * resolved once and refused when one of its addresses is refused. A name the allow-list opens is
 * resolved and taken whatever its addresses; an address or range it opens is taken.
 */
export async function pinHost(host: string, port: number, policy: OutboundPolicy): Promise<PinnedAddress> {
  const normal = normaliseHost(host);
  if (!normal) throw new OutboundRefused('invalid-host', `host ${JSON.stringify(host)}`);
  if (normal.ip) {
    checkAddress(normal.ip, policy.allow, 'the host');
    return pinnedOf(normal.host, port, normal.ip);
  }
  if (isMetadataName(normal.host) && !nameAllowed(normal.host, policy.allow)) {
    throw new OutboundRefused('metadata-name', `${normal.host} is a metadata name`);
  }
  return pinnedOf(normal.host, port, await resolveChecked(normal.host, policy));
}

/** {@link pinHost} for the host and port of a URL ({@link urlHost}). */
export async function pinUrl(url: string, policy: OutboundPolicy): Promise<PinnedAddress> {
  const { host, port } = urlHost(url);
  return pinHost(host, port, policy);
}

/**
 * The check made when a tenant saves an address: as {@link pinUrl}, except that a name the
 * allow-list opens is taken without being resolved (the operator vouches for it; it is resolved
 * and pinned when the connection is made).
 */
export async function checkUrl(url: string, policy: OutboundPolicy): Promise<UrlHost> {
  const target = urlHost(url);
  if (target.ip === null && nameAllowed(target.host, policy.allow)) return target;
  await pinHost(target.host, target.port, policy);
  return target;
}
