import { isIP } from 'node:net';

// Whether an address is one the open internet routes to, for anything that fetches a URL a caller
// gave (media_urls): a request to a loopback, private, link-local (cloud metadata at
// 169.254.169.254), CGNAT or otherwise special address would reach this host's neighbours rather
// than the internet (SSRF). IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64,
// 6to4) are judged by that IPv4 address.

type Range = [base: bigint, prefix: number];

const v4 = (text: string): bigint | null => {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n);
};

function v6(text: string): bigint | null {
  let t = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  // A trailing dotted IPv4 (::ffff:1.2.3.4) becomes two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(t);
  if (dotted?.[1]) {
    const n = v4(dotted[1]);
    if (n === null) return null;
    t = `${t.slice(0, -dotted[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const halves = t.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  return all.reduce((acc, g) => (acc << 16n) | BigInt(`0x${g}`), 0n);
}

const cidr4 = (text: string): Range => {
  const [base, prefix] = text.split('/');
  return [v4(base as string) as bigint, Number(prefix)];
};
const cidr6 = (text: string): Range => {
  const [base, prefix] = text.split('/');
  return [v6(base as string) as bigint, Number(prefix)];
};

// IANA special-purpose registries (RFC 6890 and successors): nothing here is the public internet.
const BLOCKED_V4: Range[] = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT (also some clouds' metadata, 100.100.100.200)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, cloud metadata 169.254.169.254
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
].map(cidr4);

const BLOCKED_V6: Range[] = [
  '::/128', // unspecified
  '::1/128', // loopback
  '100::/64', // discard
  '2001::/23', // IETF protocol assignments (Teredo among them)
  '2001:db8::/32', // documentation
  'fc00::/7', // unique local (fd00::/8; AWS metadata fd00:ec2::254)
  'fe80::/10', // link-local
  'fec0::/10', // site-local (deprecated)
  'ff00::/8', // multicast
].map(cidr6);

const inRange = (n: bigint, bits: number, [base, prefix]: Range) =>
  n >> BigInt(bits - prefix) === base >> BigInt(bits - prefix);

// IPv6 prefixes whose low 32 bits are an IPv4 address the packet ends up at.
const EMBEDDING_V4: Range[] = ['::ffff:0:0/96', '::/96', '64:ff9b::/96', '64:ff9b:1::/48'].map(cidr6);
const SIX_TO_FOUR = cidr6('2002::/16');

const isPublicV4 = (n: bigint) => !BLOCKED_V4.some((r) => inRange(n, 32, r));

/** True only for a well-formed IP address on the public internet. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (family === 4) {
    const n = v4(address);
    return n !== null && isPublicV4(n);
  }
  if (family !== 6) return false;
  const n = v6(address);
  if (n === null) return false;
  // ::1 and :: fall in ::/96 as 0.0.0.1 and 0.0.0.0, which 0.0.0.0/8 refuses.
  if (EMBEDDING_V4.some((r) => inRange(n, 128, r))) return isPublicV4(n & 0xffffffffn);
  if (inRange(n, 128, SIX_TO_FOUR)) return isPublicV4((n >> 80n) & 0xffffffffn);
  return !BLOCKED_V6.some((r) => inRange(n, 128, r));
}
