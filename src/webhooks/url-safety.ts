/**
 * The endpoint rules of docs/webhooks.md, checked at registration and again before every
 * attempt: `https://` only, at most 255 characters, no credentials, no fragment, and a host
 * that is not a local name and resolves (A and AAAA, following CNAMEs, through DNS-over-HTTPS:
 * Workers have no DNS API) only to public addresses; the ranges refused are listed below,
 * with their sources (docs/webhooks-security.md: why).
 */

import ipaddr from "ipaddr.js";
import { SECOND_MS } from "../time/units";

/** The longest accepted URL, in characters. */
export const MAX_URL_LENGTH = 255;

/** How long a resolved answer is reused at most, whatever its TTL (seconds). */
const MAX_CACHE_SECONDS = 60;
/** CNAME hops followed at most. */
const MAX_CNAME_HOPS = 8;

/** Name of a rule, as given in a 422 `type` (`value_error.url.<rule>`). */
type UrlRule =
  | "invalid"
  | "length"
  | "scheme"
  | "credentials"
  | "fragment"
  | "host"
  | "address"
  | "resolve";

/** The settings the rules depend on. */
export interface UrlSafetyOptions {
  /** `ENVIRONMENT`: the exemption applies only in `development` and `test`. */
  environment: string;
  /** DNS-over-HTTPS JSON API endpoint, for example `https://cloudflare-dns.com/dns-query`. */
  dohUrl: string;
  /** Exact origins (`http://127.0.0.1:9999`) exempt from the scheme and host rules in local development. */
  exemptOrigins: readonly string[];
}

/** Outcome of a check. */
type EndpointCheck =
  | { kind: "safe"; url: URL }
  /** A rule is broken: a 422 at registration, the failed attempt `unsafe destination` at delivery. */
  | { kind: "refused"; rule: UrlRule; message: string }
  /** The name has no A/AAAA record, or the resolver failed: retryable at delivery. */
  | { kind: "unresolved"; message: string; resolverError: boolean };

function refused(rule: UrlRule, message: string): EndpointCheck {
  return { kind: "refused", rule, message };
}

/** True when the exemption of local development applies to `url`. */
function isExempt(url: URL, options: UrlSafetyOptions): boolean {
  if (options.environment !== "development" && options.environment !== "test") return false;
  return options.exemptOrigins.includes(url.origin);
}

/**
 * The rules that need no DNS: length, syntax, scheme, credentials, fragment,
 * local host names and IP literals.
 *
 * @param raw the URL as given.
 * @returns `safe` with the parsed URL and whether its host still needs
 *   resolving, or `refused` naming the rule.
 */
export function checkUrlShape(
  raw: string,
  options: UrlSafetyOptions,
):
  | { kind: "safe"; url: URL; resolveHost: string | null }
  | Extract<EndpointCheck, { kind: "refused" }> {
  const no = (rule: UrlRule, message: string) => ({ kind: "refused" as const, rule, message });
  if (raw.length > MAX_URL_LENGTH) {
    return no("length", `URL must be at most ${MAX_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return no("invalid", "Must be an absolute URL");
  }
  if (url.username !== "" || url.password !== "" || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(raw)) {
    return no("credentials", "URL must not contain credentials (user:pass@)");
  }
  // `new URL("https://a/#").hash` is "", so look at the text as given.
  if (raw.includes("#")) return no("fragment", "URL must not contain a #fragment");
  if (isExempt(url, options)) return { kind: "safe", url, resolveHost: null };
  if (url.protocol !== "https:") return no("scheme", "URL must use https://");

  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host.endsWith(".local") ||
    host.endsWith(".internal")
  ) {
    return no(
      "host",
      "URL host must not be localhost or a name under .localhost, .local or .internal",
    );
  }
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  const range = nonPublicRange(literal);
  if (range !== undefined) {
    if (range === null) return no("address", `URL host ${literal} is not a valid IP address`);
    return no("address", `URL host must be a public address: ${literal} is ${range}`);
  }
  if (parseIPv4(literal) !== null || parseIPv6(literal) !== null) {
    return { kind: "safe", url, resolveHost: null };
  }
  return { kind: "safe", url, resolveHost: host };
}

/**
 * Every rule, resolving the host through DNS-over-HTTPS when it is a name.
 *
 * @param raw the URL as given.
 * @param options the settings.
 * @param signal aborts the DNS queries (the attempt's 10 s limit covers them).
 * @returns `safe`, `refused` (a rule is broken, naming it; also when an answer's data is
 *   not an IP address) or `unresolved`.
 */
export async function checkEndpoint(
  raw: string,
  options: UrlSafetyOptions,
  signal?: AbortSignal,
): Promise<EndpointCheck> {
  const shape = checkUrlShape(raw, options);
  if (shape.kind !== "safe") return shape;
  if (shape.resolveHost === null) return { kind: "safe", url: shape.url };
  const resolved = await resolveHost(shape.resolveHost, options.dohUrl, signal);
  if (resolved.kind === "error") {
    return { kind: "unresolved", message: resolved.message, resolverError: true };
  }
  if (resolved.addresses.length === 0) {
    return {
      kind: "unresolved",
      message: `URL host ${shape.resolveHost} does not resolve (no A or AAAA record)`,
      resolverError: false,
    };
  }
  for (const address of resolved.addresses) {
    // Fail closed: an answer whose data is not an address (`localhost`, a name, garbage)
    // says nothing about where the connection will go, so it is not taken for public.
    if (parseIPv4(address) === null && parseIPv6(address) === null) {
      return refused(
        "address",
        `URL host must resolve only to public addresses: ${shape.resolveHost} resolves to ` +
          `${JSON.stringify(address)}, not an IP address`,
      );
    }
    const range = nonPublicRange(address);
    if (range !== undefined) {
      return refused(
        "address",
        `URL host must resolve only to public addresses: ${shape.resolveHost} resolves to ${address}` +
          (range === null ? ", not a valid IP address" : `, ${range}`),
      );
    }
  }
  return { kind: "safe", url: shape.url };
}

// ---------------------------------------------------------------------------
// DNS-over-HTTPS (JSON API: https://developers.cloudflare.com/1.1.1.1/encryption/dns-over-https/make-api-requests/dns-json/)

const TYPE_A = 1;
const TYPE_CNAME = 5;
const TYPE_AAAA = 28;

interface DohAnswer {
  name?: string;
  type: number;
  TTL?: number;
  data: string;
}

type Resolved =
  | { kind: "ok"; addresses: string[]; ttl: number }
  | { kind: "error"; message: string };

const cache = new Map<string, { expiresAt: number; addresses: string[] }>();

async function queryDoh(
  name: string,
  type: number,
  dohUrl: string,
  signal: AbortSignal | undefined,
): Promise<{ status: number; answers: DohAnswer[] }> {
  const url = new URL(dohUrl);
  url.searchParams.set("name", name);
  url.searchParams.set("type", type === TYPE_A ? "A" : "AAAA");
  const response = await fetch(url, { headers: { accept: "application/dns-json" }, signal });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`resolver answered ${response.status}`);
  }
  const json: unknown = await response.json();
  if (typeof json !== "object" || json === null || !("Status" in json)) {
    throw new Error("resolver answer is not DNS JSON");
  }
  const status = typeof json.Status === "number" ? json.Status : -1;
  const raw = "Answer" in json && Array.isArray(json.Answer) ? json.Answer : [];
  const answers = raw.filter(
    (a: unknown): a is DohAnswer =>
      typeof a === "object" &&
      a !== null &&
      "type" in a &&
      typeof a.type === "number" &&
      "data" in a &&
      typeof a.data === "string",
  );
  return { status, answers };
}

/** Addresses of one record type for `name`, following CNAMEs the resolver did not. */
async function resolveType(
  name: string,
  type: number,
  dohUrl: string,
  signal: AbortSignal | undefined,
): Promise<{ addresses: string[]; ttl: number }> {
  let current = name;
  let ttl = MAX_CACHE_SECONDS;
  for (let hop = 0; hop <= MAX_CNAME_HOPS; hop += 1) {
    const { status, answers } = await queryDoh(current, type, dohUrl, signal);
    if (status === 3) return { addresses: [], ttl: 0 }; // NXDOMAIN
    if (status !== 0) throw new Error(`resolver status ${status}`);
    for (const a of answers) ttl = Math.min(ttl, Math.max(0, a.TTL ?? 0));
    const addresses = answers.filter((a) => a.type === type).map((a) => a.data);
    if (addresses.length > 0) return { addresses, ttl };
    const cname = answers.filter((a) => a.type === TYPE_CNAME).at(-1);
    if (!cname) return { addresses: [], ttl: 0 };
    current = cname.data.replace(/\.$/, "");
  }
  throw new Error("too many CNAME hops");
}

/**
 * Every A and AAAA address of `host` (cached within the answers' TTL, at most 60 s).
 *
 * @returns the addresses (empty when the name does not resolve) or a resolver error.
 */
async function resolveHost(host: string, dohUrl: string, signal?: AbortSignal): Promise<Resolved> {
  const key = `${dohUrl} ${host}`;
  const hit = cache.get(key);
  if (hit && hit.expiresAt > Date.now()) {
    return { kind: "ok", addresses: hit.addresses, ttl: 0 };
  }
  try {
    const [a, aaaa] = await Promise.all([
      resolveType(host, TYPE_A, dohUrl, signal),
      resolveType(host, TYPE_AAAA, dohUrl, signal),
    ]);
    const addresses = [...a.addresses, ...aaaa.addresses];
    const ttl = Math.min(a.ttl, aaaa.ttl);
    if (addresses.length > 0 && ttl > 0) {
      cache.set(key, { expiresAt: Date.now() + ttl * SECOND_MS, addresses });
    }
    return { kind: "ok", addresses, ttl };
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    return {
      kind: "error",
      message: timedOut
        ? "timeout"
        : `DNS lookup failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

// ---------------------------------------------------------------------------
// Address ranges: parsing and matching by ipaddr.js; the table of refused ranges is ours.

/** Parses strict dotted-quad IPv4 (`1.2.3.4`: four decimal parts 0-255, no leading zeros). */
function parseIPv4(text: string): number[] | null {
  // isValidFourPartDecimal refuses the forms `inet_aton` takes (`127.1`, `0x7f.0.0.1`, `010.0.0.1`).
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text).toByteArray() : null;
}

/**
 * Parses IPv6 text (with `::` and an optional dotted IPv4 tail) into 16 bytes;
 * a zone (`%eth0`) is refused.
 */
export function parseIPv6(text: string): number[] | null {
  if (text.includes("%")) return null;
  // ipaddr.js reads an IPv4 tail after `::` (`::1.2.3.4`, IPv4-compatible) as IPv4-mapped
  // (`::ffff:1.2.3.4`), which would judge it by its IPv4 address: the tail is written as two
  // hexadecimal groups first, so the address keeps its own bytes.
  const tail = /^(.*:)([^:]*\.[^:]*)$/.exec(text);
  let hex = text;
  if (tail) {
    const v4 = parseIPv4(tail[2] ?? "");
    if (!v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    hex = `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  return ipaddr.IPv6.isValid(hex) ? ipaddr.IPv6.parse(hex).toByteArray() : null;
}

/** A refused range: its CIDR and the name given in refusals. */
type Range = readonly [cidr: string, name: string];

// The ranges refused: the IANA special-purpose registries (RFC 6890 and updates:
// https://www.iana.org/assignments/iana-ipv4-special-registry,
// https://www.iana.org/assignments/iana-ipv6-special-registry) plus multicast (224.0.0.0/4,
// ff00::/8), reserved (240.0.0.0/4) and, for IPv6, anything outside global unicast 2000::/3.
// IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96) addresses are judged by the IPv4
// address they carry.

const IPV4_REFUSED: readonly Range[] = [
  ["0.0.0.0/8", "unspecified (0.0.0.0/8)"],
  ["10.0.0.0/8", "private (10.0.0.0/8)"],
  ["100.64.0.0/10", "CGNAT (100.64.0.0/10)"],
  ["127.0.0.0/8", "loopback (127.0.0.0/8)"],
  ["169.254.0.0/16", "link-local (169.254.0.0/16)"],
  ["172.16.0.0/12", "private (172.16.0.0/12)"],
  ["192.0.0.0/24", "reserved (192.0.0.0/24)"],
  ["192.0.2.0/24", "documentation (192.0.2.0/24)"],
  ["192.88.99.0/24", "reserved (192.88.99.0/24)"],
  ["192.168.0.0/16", "private (192.168.0.0/16)"],
  ["198.18.0.0/15", "reserved (198.18.0.0/15)"],
  ["198.51.100.0/24", "documentation (198.51.100.0/24)"],
  ["203.0.113.0/24", "documentation (203.0.113.0/24)"],
  ["224.0.0.0/4", "multicast (224.0.0.0/4)"],
  ["240.0.0.0/4", "reserved (240.0.0.0/4)"],
];

const IPV6_REFUSED: readonly Range[] = [
  ["::/128", "unspecified (::/128)"],
  ["::1/128", "loopback (::1/128)"],
  ["fc00::/7", "unique-local (fc00::/7)"],
  ["fe80::/10", "link-local (fe80::/10)"],
  ["fec0::/10", "site-local (fec0::/10)"],
  ["ff00::/8", "multicast (ff00::/8)"],
  ["2001:db8::/32", "documentation (2001:db8::/32)"],
  ["3fff::/20", "documentation (3fff::/20)"],
  ["2001::/23", "reserved (2001::/23)"],
  ["2002::/16", "reserved (6to4, 2002::/16)"],
  ["64:ff9b:1::/48", "reserved (64:ff9b:1::/48)"],
  ["100::/64", "reserved (discard, 100::/64)"],
];

const IPV4_RANGES = IPV4_REFUSED.map(
  ([cidr, name]) => [ipaddr.IPv4.parseCIDR(cidr), name] as const,
);
const IPV6_RANGES = IPV6_REFUSED.map(
  ([cidr, name]) => [ipaddr.IPv6.parseCIDR(cidr), name] as const,
);
/** IPv6 ranges that carry an IPv4 address in their last 32 bits: IPv4-mapped and NAT64. */
const EMBEDDING_IPV4 = ["::ffff:0:0/96", "64:ff9b::/96"].map((c) => ipaddr.IPv6.parseCIDR(c));
/** Global unicast: the only public IPv6 space. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");

function refusedIPv4(address: ipaddr.IPv4): string | undefined {
  return IPV4_RANGES.find(([range]) => address.match(range))?.[1];
}

/**
 * Names the refused range an IP address belongs to.
 *
 * @param text an IPv4 or IPv6 address (no brackets), or any other text.
 * @returns the range's name (for example `loopback (127.0.0.0/8)`) when
 *   refused, `null` when `text` looks like an IP address but does not parse,
 *   `undefined` when the address is public or `text` is not an IP address.
 */
export function nonPublicRange(text: string): string | null | undefined {
  const v4 = parseIPv4(text);
  if (v4) return refusedIPv4(ipaddr.IPv4.parse(text));
  if (!text.includes(":")) {
    // A name made of digits and dots that is not a dotted quad is not a host name either.
    return /^[\d.]+$/.test(text) ? null : undefined;
  }
  const bytes = parseIPv6(text);
  if (!bytes) return null;
  const address = new ipaddr.IPv6(
    Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0)),
  );
  if (EMBEDDING_IPV4.some((range) => address.match(range))) {
    const name = refusedIPv4(new ipaddr.IPv4(bytes.slice(12)));
    return name === undefined ? undefined : `${name}, embedded in ${text}`;
  }
  const named = IPV6_RANGES.find(([range]) => address.match(range))?.[1];
  if (named) return named;
  if (!address.match(GLOBAL_UNICAST)) return "reserved (outside 2000::/3)";
  return undefined;
}
