import type { IncomingMessage } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clientAddressOf, clientKey } from "./client-address.js";

describe("clientKey", () => {
  it("keeps an IPv4 address, mapped or not", () => {
    expect(clientKey("127.0.0.10")).toBe("127.0.0.10");
    expect(clientKey("::ffff:10.1.2.3")).toBe("10.1.2.3");
  });

  it("groups IPv6 addresses by their /64", () => {
    expect(clientKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey("fe80::1")).toBe("fe80:0:0:0::/64");
  });
});

describe("clientAddressOf", () => {
  const request = (peer: string, forwardedFor?: string) =>
    ({
      socket: { remoteAddress: peer },
      headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor },
    }) as unknown as IncomingMessage;

  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("reads past the trusted proxies from the right, and believes nothing from others", () => {
    const of = clientAddressOf(["10.0.0.0/8", "192.0.2.1"]);
    // A chain of two trusted proxies: the client is the first address neither added.
    expect(of(request("10.1.2.3", "198.51.100.9, 203.0.113.5, 192.0.2.1"))).toBe("203.0.113.5");
    expect(of(request("203.0.113.77", "198.51.100.9"))).toBe("203.0.113.77");
    expect(of(request("10.1.2.3"))).toBe("10.1.2.3");
    expect(clientAddressOf([])(request("10.1.2.3", "198.51.100.9"))).toBe("10.1.2.3");
  });

  it("takes CAIRN_TRUSTED_PROXIES when none are given, and names what it cannot read", () => {
    vi.stubEnv("CAIRN_TRUSTED_PROXIES", " loopback , 10.0.0.0/8 ");
    expect(clientAddressOf()(request("127.0.0.1", "198.51.100.9"))).toBe("198.51.100.9");
    vi.stubEnv("CAIRN_TRUSTED_PROXIES", "10.0.0.0/8,not-an-address");
    expect(() => clientAddressOf()).toThrow(/^CAIRN_TRUSTED_PROXIES: .*not-an-address/);
  });
});
