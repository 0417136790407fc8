// Outbound URL safety for webhooks: https only (plain http and private addresses only for hosts in
// WEBHOOK_ALLOW_HTTP_HOSTS), and no private, loopback or link-local destination, checked at
// registration and again at connect time through the socket's own DNS lookup (no rebinding).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) blocked.addSubnet(net, bits, 'ipv6');

export function isPrivateAddress(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) return blocked.check(ip, 'ipv4');
  if (v === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(ip, 'ipv6');
  }
  return true;
}

export class UnsafeUrl extends Error {
  override name = 'UnsafeUrl';
}

const hostOf = (u: URL) => u.hostname.replace(/^\[|\]$/g, '').toLowerCase();

/** Checks scheme and resolved addresses. Throws UnsafeUrl with a message a person can act on. */
export async function assertSafeWebhookUrl(raw: string, allowHosts: readonly string[]): Promise<URL> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UnsafeUrl(`"${raw}" is not an absolute URL.`);
  }
  const host = hostOf(u);
  const allowed = allowHosts.map((h) => h.toLowerCase()).includes(host);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && allowed)) {
    throw new UnsafeUrl(`Webhook URLs must use https:// (plain http:// only for hosts in WEBHOOK_ALLOW_HTTP_HOSTS); got ${u.protocol}//${host}.`);
  }
  if (u.username || u.password) throw new UnsafeUrl('Webhook URLs must not carry credentials.');
  if (allowed) return u;
  const addrs = isIP(host) ? [{ address: host }] : await new Promise<LookupAddress[]>((resolve, reject) => dnsLookup(host, { all: true }, (e, a) => (e ? reject(new UnsafeUrl(`The host ${host} does not resolve (${e.code}).`)) : resolve(a))));
  const bad = addrs.find((a) => isPrivateAddress(a.address));
  if (bad) throw new UnsafeUrl(`The host ${host} resolves to ${bad.address}, a private, loopback or link-local address; webhooks go to public addresses only.`);
  return u;
}

/** A `lookup` for http.request that refuses private addresses at connect time (unless the host is allowed). */
export function guardedLookup(allowHosts: readonly string[]) {
  const allow = new Set(allowHosts.map((h) => h.toLowerCase()));
  return (hostname: string, options: object, cb: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, '', 0);
      const list = addresses as LookupAddress[];
      if (!allow.has(hostname.toLowerCase())) {
        const bad = list.find((a) => isPrivateAddress(a.address));
        if (bad) return cb(Object.assign(new Error(`refused: ${hostname} resolves to private address ${bad.address}`), { code: 'EPRIVATE' }), '', 0);
      }
      if ((options as { all?: boolean }).all) return cb(null, list);
      cb(null, list[0].address, list[0].family);
    });
  };
}
