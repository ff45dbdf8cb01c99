import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { embeddedIpv4 } from "../../../core/ip-address.js";

// Addresses a sandbox must never reach through its proxy unless the exact address is on its
// allowlist: this host and its neighbours, cloud metadata, and what is not routable at all.
const forbidden = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  forbidden.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  forbidden.addSubnet(network, prefix, "ipv6");
}

/**
 * Whether `address` (an IP literal, as the URL parser or DNS gives it) is one a sandbox may be
 * sent to: not loopback, private, link-local, shared, multicast, reserved or documentation
 * space, nor cloud metadata (169.254.169.254, fd00:ec2::254), nor an IPv4-mapped, IPv4-
 * compatible or NAT64 form of one of them.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !forbidden.check(address, "ipv4");
  if (family !== 6) return false;
  const embedded = embeddedIpv4(address);
  if (embedded !== undefined && !isPublicAddress(embedded)) return false;
  return !forbidden.check(address, "ipv6");
}

// This host and the cloud's metadata service: no allowlist reaches them, since a tenant writes
// its own allowlists; only the operator's --egress-host names a service here.
const hostOnly = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
] as const) {
  hostOnly.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fe80::", 10],
  ["fd00:ec2::254", 128],
] as const) {
  hostOnly.addSubnet(network, prefix, "ipv6");
}

/**
 * Whether `address` is this host's own (unspecified, loopback) or link-local, which holds cloud
 * metadata (169.254.169.254, fd00:ec2::254), in any IPv6 form that embeds one: addresses an
 * allowlist cannot open, because the project that owns a sandbox writes its allowlists.
 */
export function isHostOnlyAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return hostOnly.check(address, "ipv4");
  if (family !== 6) return false;
  const embedded = embeddedIpv4(address);
  if (embedded !== undefined && isHostOnlyAddress(embedded)) return true;
  return hostOnly.check(address, "ipv6");
}

/** Where the proxy connects for a request: the address it vetted, never a name. */
export interface VettedTarget {
  readonly address: string;
  readonly port: number;
}

/** Names the service resolves to an address of its own choosing (`--egress-host`). */
export type EgressHosts = ReadonlyMap<string, { readonly address: string; readonly port: number }>;

/** Why a target has no address to dial, and the RFC 9209 error type that names it. */
export interface TargetRefusal {
  readonly refused: string;
  readonly error: "destination_not_found" | "destination_ip_prohibited";
}

/**
 * The address to dial for `host:port`, or why there is none: a name from `egressHosts` goes to
 * exactly its address (loopback allowed: the operator named it); an IP literal must be public
 * unless the allowlist names that exact address, and never this host's own, link-local or
 * metadata address; a name is resolved here, once, and only a
 * public address it resolves to is used, so a rebinding answer later cannot change where the
 * connection goes.
 */
export async function vetTarget(
  host: string,
  port: number,
  allowlist: readonly string[],
  egressHosts: EgressHosts,
  resolve: (host: string) => Promise<string[]> = resolveAll,
): Promise<VettedTarget | string> {
  const vetted = await vetTargetOrRefusal(host, port, allowlist, egressHosts, resolve);
  return "refused" in vetted ? vetted.refused : vetted;
}

/** {@link vetTarget}, with the kind of a refusal (the egress proxy's Proxy-Status says it). */
export async function vetTargetOrRefusal(
  host: string,
  port: number,
  allowlist: readonly string[],
  egressHosts: EgressHosts,
  resolve: (host: string) => Promise<string[]> = resolveAll,
): Promise<VettedTarget | TargetRefusal> {
  const named = egressHosts.get(host);
  if (named !== undefined) return named;
  if (isIP(host) !== 0) {
    const literal = isIP(host) === 6 ? `[${host}]` : host;
    if (isHostOnlyAddress(host)) {
      return {
        refused: `${host} is this host's own, link-local or cloud metadata address, which no allowlist opens; a service on this host is reached through a name the operator gives it (cairn dev --egress-host name=${host.includes(":") ? `[${host}]` : host}:port)`,
        error: "destination_ip_prohibited",
      };
    }
    const exact = allowlist.some((entry) => entry === literal || entry === `${literal}:${port}`);
    if (exact || isPublicAddress(host)) return { address: host, port };
    return {
      refused: `${host} is a private, loopback, link-local or metadata address, which a sandbox may reach only when its allowlist names that exact address`,
      error: "destination_ip_prohibited",
    };
  }
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    return {
      refused: `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "lookup failed"})`,
      error: "destination_not_found",
    };
  }
  const usable = addresses.find(isPublicAddress);
  if (usable === undefined) {
    return {
      refused: `${host} resolves only to private, loopback, link-local or metadata addresses (${addresses.join(", ")})`,
      error: "destination_ip_prohibited",
    };
  }
  return { address: usable, port };
}

async function resolveAll(host: string): Promise<string[]> {
  const answers = await lookup(host, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}
