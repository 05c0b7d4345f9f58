import { BlockList, isIP } from 'node:net';

const plain = (ip: string) => (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

/** The proxies named by TRUST_PROXY (addresses or CIDR ranges), or null when none are trusted. */
export function trustedProxies(entries: string[]): BlockList | null {
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (!isIP(address)) throw new Error(`TRUST_PROXY: "${entry}" is not an address or CIDR range`);
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

const trusted = (list: BlockList, ip: string) =>
  isIP(ip) !== 0 && list.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4');

/**
 * The caller's address: the socket's, unless the socket is a trusted proxy; then X-Forwarded-For
 * is read from the right, skipping trusted proxies, and the first other address is the client.
 * Addresses left of it could be made up by the client, so they are never believed.
 */
export function clientIp(
  socketIp: string,
  forwardedFor: string | undefined,
  proxies: BlockList | null,
): string {
  let ip = plain(socketIp);
  if (!proxies || !forwardedFor || !trusted(proxies, ip)) return ip;
  const hops = forwardedFor.split(',').map((h) => plain(h.trim()));
  while (hops.length > 0 && trusted(proxies, ip)) {
    const next = hops.pop() as string;
    if (!isIP(next)) break;
    ip = next;
  }
  return ip;
}

/**
 * What per-address limits count by: an IPv4 address, or an IPv6 address's /64 network, since one
 * subscriber usually holds a whole /64 and could otherwise rotate addresses to dodge a limit.
 */
export function addressKey(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
