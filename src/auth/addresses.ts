import { BlockList, isIP } from 'node:net';

/*
 * Client addresses: which ones are the configured reverse proxies, and which are loopback.
 * Matched against the TCP peer (`req.socket.remoteAddress`), never X-Forwarded-For, which anyone
 * can send; only Express's `trust proxy` (src/web/site.ts) reads that, from trusted proxies only.
 */

export interface AddressRule {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `10.0.0.7`, `10.0.0.0/8`, `::1`, `fd00::/8`; a problem text when it is neither an IP nor a CIDR. */
export function parseAddressRule(text: string): AddressRule | { problem: string } {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return { problem: 'must be an IP address or a CIDR block (10.0.0.0/8, fd00::/8)' };
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const max = version === 4 ? 32 : 128;
  if (prefixText === undefined) return { address, prefix: max, family };
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return { problem: `the prefix length must be 0 to ${max}` };
  return { address, prefix, family };
}

/** `::ffff:10.0.0.7` (an IPv4 client on a dual-stack socket) as `10.0.0.7`. */
export function normaliseAddress(address: string | undefined): string | null {
  if (!address) return null;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  const plain = mapped ? mapped[1]! : address;
  return isIP(plain) === 0 ? null : plain;
}

/** A matcher over configured addresses and blocks. */
export function addressMatcher(rules: readonly string[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const text of rules) {
    const rule = parseAddressRule(text);
    if ('problem' in rule) throw new Error(`trusted address ${JSON.stringify(text)} ${rule.problem}`);
    list.addSubnet(rule.address, rule.prefix, rule.family);
  }
  return (address) => {
    const plain = normaliseAddress(address);
    if (!plain) return false;
    return list.check(plain, isIP(plain) === 4 ? 'ipv4' : 'ipv6');
  };
}

const loopback = addressMatcher(['127.0.0.0/8', '::1/128']);

/** A loopback peer address (127.0.0.0/8, ::1, or either mapped into IPv6). */
export function isLoopbackAddress(address: string | undefined): boolean {
  return loopback(address);
}

/** A listen host that only this machine can reach: loopback addresses and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === 'ip6-localhost' || isLoopbackAddress(h);
}
