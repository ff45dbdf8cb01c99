import type { IncomingMessage } from "node:http";
import { isIPv6 } from "node:net";
import proxyaddr from "proxy-addr";
import { environment, environmentVariables } from "../../core/config.js";
import { ConfigurationError } from "../../core/errors/index.js";

/**
 * Who a client is, for limits per client: its IPv4 address, or the /64 network of its IPv6
 * address (one host usually has a whole /64, so one address each would let it dodge a limit).
 * IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return mapped;
  if (!isIPv6(address)) return address;
  const [head = "", tail = ""] = address.split("::");
  const front = head === "" ? [] : head.split(":");
  const back = tail === "" ? [] : tail.split(":");
  const groups = address.includes("::")
    ? [...front, ...Array(8 - front.length - back.length).fill("0"), ...back]
    : front;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

/** The address a request came from, as the rate limits count it. */
export type ClientAddressOf = (req: IncomingMessage) => string;

/**
 * Who sent each request: the connection's peer, or, when the peer is one of `trustedProxies`
 * (addresses, CIDR ranges such as `10.0.0.0/8`, or `loopback`, `linklocal`, `uniquelocal`), the
 * address its `X-Forwarded-For` names, read from the right and past every trusted proxy, as
 * Express's `trust proxy` reads it (proxy-addr). Behind a load balancer, without it every client
 * is the balancer, and one client's failed authentications get all of them refused.
 *
 * `trustedProxies` defaults to `CAIRN_TRUSTED_PROXIES` (comma-separated); none by default, since
 * a client that reaches the service directly could otherwise name any address it likes.
 */
export function clientAddressOf(trustedProxies?: readonly string[]): ClientAddressOf {
  const fromEnvironment = environment("trustedProxies");
  const given =
    trustedProxies ??
    fromEnvironment
      ?.split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "") ??
    [];
  const peer: ClientAddressOf = (req) => req.socket.remoteAddress ?? "unknown";
  if (given.length === 0) return peer;
  let trust: (address: string, index: number) => boolean;
  try {
    trust = proxyaddr.compile([...given]);
  } catch (error) {
    const source =
      trustedProxies === undefined
        ? environmentVariables.trustedProxies
        : "trustedProxies (--trusted-proxies)";
    throw new ConfigurationError(
      `${source}: ${(error as Error).message}; give addresses or CIDR ranges (10.0.0.0/8, fd00::/8), or loopback, linklocal, uniquelocal`,
    );
  }
  return (req) => (req.socket.remoteAddress === undefined ? "unknown" : proxyaddr(req, trust));
}
