/*
 * Which addresses a notification may be sent to. A webhook or SMTP destination in a private,
 * loopback, link-local, unique-local, carrier-grade NAT or otherwise non-public range is refused
 * unless its channel says `"allow_private_network": true`: whoever writes the configuration could
 * otherwise make cloudtally call the cloud's metadata service (169.254.169.254), a database port
 * or an internal admin page from inside the network. The configuration refuses such a literal
 * address when it is loaded (config/notify.ts, config/actions.ts); the senders check every address
 * a name resolves to before connecting, and connect only to a checked one (notify/destination.ts).
 */
import { isIP } from 'node:net';

interface Range {
  /** The network as 32 (IPv4) or 128 (IPv6) bits. */
  bits: bigint;
  prefix: number;
  label: string;
}

function v4Bits(address: string): bigint {
  return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

/** The 128 bits of an IPv6 address (`::`, an embedded dotted IPv4 tail and a zone id allowed). */
function v6Bits(address: string): bigint {
  const plain = address.replace(/%.*$/, '');
  const hextets = (part: string): number[] => {
    if (part === '') return [];
    return part.split(':').flatMap((piece) => {
      if (piece.includes('.')) {
        const v4 = Number(v4Bits(piece));
        return [v4 >>> 16, v4 & 0xffff];
      }
      return [parseInt(piece, 16)];
    });
  };
  const [head = '', tail] = plain.split('::');
  const left = hextets(head);
  const right = tail === undefined ? [] : hextets(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.reduce((n, group) => (n << 16n) | BigInt(group), 0n);
}

const V4_RANGES: readonly Range[] = (
  [
    ['0.0.0.0', 8, '"this network" (0.0.0.0/8)'],
    ['10.0.0.0', 8, 'private (10.0.0.0/8)'],
    ['100.64.0.0', 10, 'carrier-grade NAT (100.64.0.0/10)'],
    ['127.0.0.0', 8, 'loopback (127.0.0.0/8)'],
    ['169.254.0.0', 16, 'link-local (169.254.0.0/16)'],
    ['172.16.0.0', 12, 'private (172.16.0.0/12)'],
    ['192.0.0.0', 24, 'IETF protocol assignments (192.0.0.0/24)'],
    ['192.168.0.0', 16, 'private (192.168.0.0/16)'],
    ['198.18.0.0', 15, 'benchmarking (198.18.0.0/15)'],
    ['224.0.0.0', 4, 'multicast (224.0.0.0/4)'],
    ['240.0.0.0', 4, 'reserved (240.0.0.0/4)'],
  ] as const
).map(([address, prefix, label]) => ({ bits: v4Bits(address), prefix, label }));

const V6_RANGES: readonly Range[] = (
  [
    ['::', 128, 'unspecified (::)'],
    ['::1', 128, 'loopback (::1)'],
    ['fe80::', 10, 'link-local (fe80::/10)'],
    ['fec0::', 10, 'site-local (fec0::/10)'],
    ['fc00::', 7, 'unique-local (fc00::/7)'],
    ['ff00::', 8, 'multicast (ff00::/8)'],
    ['64:ff9b:1::', 48, 'local-use NAT64 (64:ff9b:1::/48)'],
  ] as const
).map(([address, prefix, label]) => ({ bits: v6Bits(address), prefix, label }));

/** IPv6 forms that carry an IPv4 address, which is what they reach: checked as that address. */
const V6_EMBEDDING: ReadonlyArray<{ bits: bigint; prefix: number; v4: (bits: bigint) => bigint; label: string }> = [
  { bits: v6Bits('::ffff:0:0'), prefix: 96, v4: (b) => b & 0xffffffffn, label: 'IPv4-mapped' },
  { bits: v6Bits('::'), prefix: 96, v4: (b) => b & 0xffffffffn, label: 'IPv4-compatible' },
  { bits: v6Bits('64:ff9b::'), prefix: 96, v4: (b) => b & 0xffffffffn, label: 'NAT64' },
  { bits: v6Bits('2002::'), prefix: 16, v4: (b) => (b >> 80n) & 0xffffffffn, label: '6to4' },
];

function inRange(bits: bigint, width: number, range: { bits: bigint; prefix: number }): boolean {
  const shift = BigInt(width - range.prefix);
  return bits >> shift === range.bits >> shift;
}

function v4Label(bits: bigint): string | null {
  return V4_RANGES.find((range) => inRange(bits, 32, range))?.label ?? null;
}

/**
 * Why `address` (an IPv4 or IPv6 address) is not a public destination, e.g. "loopback
 * (127.0.0.0/8)" or "IPv4-mapped link-local (169.254.0.0/16)"; null for a public address.
 */
export function privateAddressKind(address: string): string | null {
  const plain = address.replace(/^\[(.*)\]$/, '$1');
  const version = isIP(plain);
  if (version === 4) return v4Label(v4Bits(plain));
  if (version !== 6) return null;
  const bits = v6Bits(plain);
  const own = V6_RANGES.find((range) => inRange(bits, 128, range));
  if (own) return own.label;
  for (const form of V6_EMBEDDING) {
    if (!inRange(bits, 128, form)) continue;
    const label = v4Label(form.v4(bits));
    if (label) return `${form.label} ${label}`;
  }
  return null;
}

/** `localhost` and names under `.localhost` always mean this machine (RFC 6761). */
function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Why the host of `url` is a non-public destination written literally (an IP address in any form
 * the URL parser accepts, such as `http://2130706433/` or `http://[::ffff:127.0.0.1]/`, or
 * `localhost`); null for a name (checked when it is resolved) or a public address.
 */
export function literalPrivateHost(url: string): string | null {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return null;
  }
  if (isLocalhostName(hostname)) return 'loopback (localhost)';
  return privateAddressKind(hostname);
}

/** The problem text for a destination refused at load time (never names the URL: it may hold a token). */
export function privateDestinationProblem(what: string, kind: string, flagAt = 'the channel'): string {
  return `${what} is a non-public address (${kind}): notifications go only to public addresses unless ${flagAt} says "allow_private_network": true (docs/notifications.md)`;
}
