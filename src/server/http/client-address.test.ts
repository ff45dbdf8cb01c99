import { describe, expect, it } from "vitest";
import { clientKey } from "./client-address.js";

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
