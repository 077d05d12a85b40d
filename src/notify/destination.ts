/**
 * Where a notification may connect (the rule: config/destinations.ts). A destination's name is
 * resolved once, every address it resolves to is checked, and the connection is made to a
 * checked address only, so a name that resolves to a public address when checked and to an
 * internal one when connecting (DNS rebinding) gets nowhere. Webhooks: an undici dispatcher whose
 * connector checks literal addresses and resolves names through a checking `lookup`, then checks
 * the connected peer once more. SMTP: the mailer resolves and checks the server first and hands
 * nodemailer a socket connected to a checked address (email.ts).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { connect as netConnect, isIP, type LookupFunction, type Socket } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { privateAddressKind } from '../config/destinations.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (tests give their own). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface DestinationPolicy {
  /** The channel's `allow_private_network`: any address may be reached. */
  allowPrivateNetwork: boolean;
  /** Default: the system resolver (dns.lookup, every address). */
  resolve?: Resolver;
}

/** A destination refused because it is, or resolves to, a non-public address. */
export class PrivateDestinationError extends Error {
  readonly code = 'EPRIVATEDESTINATION';
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly kind: string,
  ) {
    const resolved = hostname === address ? `is ${address}` : `resolves to ${address}`;
    super(`${hostname} ${resolved}, a non-public address (${kind}); the channel does not allow private networks ("allow_private_network": true)`);
    this.name = 'PrivateDestinationError';
  }
}

const systemResolver: Resolver = async (hostname) => {
  const addresses = await dnsLookup(hostname, { all: true, verbatim: true });
  return addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

function unbracketed(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Throws PrivateDestinationError when `address` is not public and the policy does not allow it. */
export function checkAddress(hostname: string, address: string, policy: DestinationPolicy): void {
  if (policy.allowPrivateNetwork) return;
  const kind = privateAddressKind(address);
  if (kind) throw new PrivateDestinationError(hostname, address, kind);
}

/**
 * Every address `hostname` stands for (itself when it is an address), each checked: one non-public
 * address refuses the whole name, so a connection can never land on it.
 */
export async function checkedAddresses(hostname: string, policy: DestinationPolicy): Promise<ResolvedAddress[]> {
  const plain = unbracketed(hostname);
  const version = isIP(plain);
  const addresses: ResolvedAddress[] = version !== 0 ? [{ address: plain, family: version === 6 ? 6 : 4 }] : await (policy.resolve ?? systemResolver)(plain);
  if (addresses.length === 0) throw Object.assign(new Error(`${plain} resolves to no address`), { code: 'ENOTFOUND' });
  for (const { address } of addresses) checkAddress(plain, address, policy);
  return addresses;
}

/** A `lookup` for net/tls.connect answering only with checked addresses. */
function checkingLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddresses(hostname, policy).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '', 0);
        if (options.all) return (callback as unknown as (err: null, addresses: ResolvedAddress[]) => void)(null, wanted);
        callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

const dispatchers = new Map<boolean, Dispatcher>();
const customDispatchers = new WeakMap<Resolver, Map<boolean, Dispatcher>>();

/**
 * The undici dispatcher for webhook requests under `policy` (kept: connections are reused).
 * Its connector refuses a literal non-public address before connecting, resolves names through
 * the checking lookup (the socket connects to the address checked, not to a second answer), and
 * checks the peer of the connection made.
 */
export function destinationDispatcher(policy: DestinationPolicy): Dispatcher {
  const cache = policy.resolve ? (customDispatchers.get(policy.resolve) ?? customDispatchers.set(policy.resolve, new Map()).get(policy.resolve)!) : dispatchers;
  let dispatcher = cache.get(policy.allowPrivateNetwork);
  if (!dispatcher) {
    const base = buildConnector({ lookup: checkingLookup(policy) } as buildConnector.BuildOptions);
    const connect: buildConnector.connector = (options, callback) => {
      const hostname = unbracketed(options.hostname);
      if (isIP(hostname) !== 0) {
        try {
          checkAddress(hostname, hostname, policy);
        } catch (err) {
          return callback(err as Error, null);
        }
      }
      base(options, (err, socket) => {
        if (err || !socket) return callback(err, null);
        const peer = (socket as Socket).remoteAddress;
        try {
          if (peer) checkAddress(hostname, peer, policy);
        } catch (refused) {
          socket.destroy();
          return callback(refused as Error, null);
        }
        callback(null, socket);
      });
    };
    dispatcher = new Agent({ connect });
    cache.set(policy.allowPrivateNetwork, dispatcher);
  }
  return dispatcher;
}

/**
 * A TCP connection to `hostname:port` through a checked address (each in turn until one answers),
 * for nodemailer's `getSocket` (email.ts): TLS, when the server wants it, is started over it by
 * nodemailer with the host name as the certificate's name.
 */
export async function connectChecked(hostname: string, port: number, policy: DestinationPolicy, timeoutMs: number): Promise<Socket> {
  const addresses = await checkedAddresses(hostname, policy);
  let lastError: unknown = null;
  for (const { address } of addresses) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = netConnect({ host: address, port });
        const fail = (err: Error) => {
          socket.destroy();
          reject(err);
        };
        socket.setTimeout(timeoutMs, () => fail(Object.assign(new Error(`connecting to ${hostname} (${address}) port ${port} timed out after ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
        socket.once('error', fail);
        socket.once('connect', () => {
          socket.off('error', fail);
          socket.setTimeout(0);
          resolve(socket);
        });
      });
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}
