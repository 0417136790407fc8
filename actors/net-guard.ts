// Outbound URL safety for webhooks (docs/edge.md, "Webhook destinations").
//
// Addresses: only globally routable unicast is a destination. Every special-purpose range of the
// IANA IPv4 and IPv6 special-purpose registries is refused, as ipaddr.js classifies them (private,
// loopback, link-local, CGNAT, documentation, benchmarking, reserved, multicast, 6to4, Teredo,
// ORCHID, discard, …); an IPv6 address must also lie in 2000::/3, the global unicast block (which
// refuses ::/96 IPv4-compatible forms, 100:0:0:1::/64 and anything not yet allocated).
// IPv6 forms that carry an IPv4 address are decoded and the IPv4 address is checked:
// ::ffff:a.b.c.d (mapped) and 64:ff9b::a.b.c.d (NAT64, which DNS64 hands out for public hosts on
// IPv6-only networks); other embedding forms (6to4, Teredo, ::ffff:0:a.b.c.d) are refused outright.
//
// When: at registration only the URL itself (syntax, scheme, credentials, literal addresses in any
// spelling the URL parser accepts, `localhost`), without DNS; at every connection, through the
// socket's own lookup (guardedLookup), every address a name resolves to, so a name that resolves
// (or is rebound) to an internal address is refused where it matters.
//
// WEBHOOK_ALLOW_HTTP_HOSTS: plain http:// is accepted for the listed hosts. Outside production
// (NODE_ENV != production) those hosts may also be private or loopback (a receiver on the
// developer's machine); in production the address rule holds for every host and scheme, so a
// listed name that resolves to an internal address is refused there too.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** The settings the rules read (Config satisfies it). */
export interface NetPolicy {
  readonly webhookAllowHttpHosts: readonly string[];
  readonly env: string;
}

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parse('2000::');
const NAT64 = ipaddr.IPv6.parse('64:ff9b::');

/** Why an address is not a webhook destination, or undefined for a public unicast address. */
export function addressRefusal(ip: string): string | undefined {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v4Refusal(v6.toIPv4Address(), ip);
    if (v6.match(NAT64, 96)) {
      const b = v6.toByteArray();
      return v4Refusal(new ipaddr.IPv4(b.slice(12)), ip);
    }
    const range = v6.range();
    if (range !== 'unicast') return `${range} (special-purpose IPv6)`;
    if (!v6.match(GLOBAL_UNICAST_V6, 3)) return 'outside the global unicast block 2000::/3';
    return undefined;
  }
  return v4Refusal(addr as ipaddr.IPv4, ip);
}

function v4Refusal(v4: ipaddr.IPv4, original: string): string | undefined {
  const range = v4.range();
  if (range === 'unicast') return undefined;
  const embedded = original.includes(':') ? ` (it carries ${v4.toString()})` : '';
  return `${range} (special-purpose IPv4)${embedded}`;
}

/** Kept for callers that only need a yes/no. */
export const isPrivateAddress = (ip: string): boolean => addressRefusal(ip) !== undefined;

export class UnsafeUrl extends Error {
  override name = 'UnsafeUrl';
}

const hostOf = (u: URL) => u.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
const listed = (policy: NetPolicy, host: string) => policy.webhookAllowHttpHosts.some((h) => h.toLowerCase().replace(/\.$/, '') === host);
/** Whether this host may be private or loopback: listed, and not a production deployment. */
const privateAllowed = (policy: NetPolicy, host: string) => policy.env !== 'production' && listed(policy, host);

/**
 * Checks a webhook URL at registration, without DNS: absolute, https:// (plain http:// only for
 * listed hosts), no credentials, and a host that is either a name or a public literal address.
 * Throws UnsafeUrl with a message a person can act on.
 */
export function assertSafeWebhookUrl(raw: string, policy: NetPolicy): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UnsafeUrl(`"${raw}" is not an absolute URL.`);
  }
  const host = hostOf(u);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && listed(policy, host))) {
    throw new UnsafeUrl(`Webhook URLs must use https:// (plain http:// only for hosts in WEBHOOK_ALLOW_HTTP_HOSTS); got ${u.protocol}//${host}.`);
  }
  if (u.username || u.password) throw new UnsafeUrl('Webhook URLs must not carry credentials.');
  if (!host) throw new UnsafeUrl('Webhook URLs need a host.');
  if (privateAllowed(policy, host)) return u;
  // The URL parser has already turned every IPv4 spelling (0x7f.1, 2130706433, 127.1) into dotted
  // decimal and every IPv6 one into its compressed form, so a literal is recognised here.
  if (ipaddr.isValid(host)) {
    const why = addressRefusal(host);
    if (why) throw new UnsafeUrl(`The address ${host} is ${why}; webhooks go to public addresses only.`);
    return u;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) throw new UnsafeUrl(`${host} is loopback; webhooks go to public addresses only.`);
  if (!host.includes('.')) throw new UnsafeUrl(`The host "${host}" is a single label, not a public DNS name (such as hooks.example.mx).`);
  return u;
}

/**
 * A `lookup` for the delivery client's sockets: every address a name resolves to must be public,
 * unless the host is listed and this is not a production deployment. (IP literals skip the lookup;
 * they were checked at registration.)
 */
export function guardedLookup(policy: NetPolicy) {
  return (hostname: string, options: object, cb: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, '', 0);
      const list = addresses as LookupAddress[];
      if (!privateAllowed(policy, hostname.toLowerCase().replace(/\.$/, ''))) {
        for (const a of list) {
          const why = addressRefusal(a.address);
          if (why) return cb(Object.assign(new Error(`refused: ${hostname} resolves to private address ${a.address} (${why})`), { code: 'EPRIVATE' }), '', 0);
        }
      }
      if ((options as { all?: boolean }).all) return cb(null, list);
      cb(null, list[0].address, list[0].family);
    });
  };
}

// ---- the allow rule: which hosts skip the scheme and address checks ---------------------------

/**
 * Local webhooks in development (config.webhookLocalEndpoints: NODE_ENV unset or `development` and
 * the API bound to a loopback address, never in production): test-mode endpoints may be
 * `http(s)://localhost`, `127.0.0.1` or `[::1]` URLs, so that a developer's own machine receives
 * deliveries. Live-mode endpoints never; other private addresses never (only WEBHOOK_ALLOW_HTTP_HOSTS).
 */
export const LOCAL_WEBHOOK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** The settings of the local rule (Config satisfies it). */
export interface LocalRuleConfig extends NetPolicy {
  readonly webhookLocalEndpoints: boolean;
}

/** Hosts accepted over plain http and at private addresses when registering an endpoint of this mode. */
export function webhookAllowHosts(c: LocalRuleConfig, livemode: boolean): readonly string[] {
  return c.webhookLocalEndpoints && !livemode ? [...c.webhookAllowHttpHosts, ...LOCAL_WEBHOOK_HOSTS] : c.webhookAllowHttpHosts;
}

/** The address rules of a registration in this mode (the local hosts count as listed in test mode, in development). */
export function registrationPolicy(c: LocalRuleConfig, livemode: boolean): NetPolicy {
  return { env: c.env, webhookAllowHttpHosts: webhookAllowHosts(c, livemode) };
}

/** The address rules at delivery (registration already applied the mode rule). */
export function deliveryPolicy(c: LocalRuleConfig): NetPolicy {
  return { env: c.env, webhookAllowHttpHosts: c.webhookLocalEndpoints ? [...c.webhookAllowHttpHosts, ...LOCAL_WEBHOOK_HOSTS] : c.webhookAllowHttpHosts };
}
