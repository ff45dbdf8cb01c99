import { describe, expect, it } from "vitest";
import { embeddedIpv4, isLinkLocalOrMetadata, loopbackAddress } from "./ip-address.js";

/** A host as the URL parser leaves it, which is what the checks read. */
const hostOf = (url: string) => new URL(url).hostname;

describe("loopbackAddress", () => {
  it("finds loopback in every spelling the URL parser lets through", () => {
    const cases: Array<[string, string]> = [
      ["http://localhost/", "127.0.0.1"],
      ["http://LocalHost./", "127.0.0.1"],
      ["http://api.localhost/", "127.0.0.1"],
      ["http://127.0.0.1/", "127.0.0.1"],
      ["http://127.9.8.7/", "127.9.8.7"],
      ["http://127.1/", "127.0.0.1"],
      ["http://2130706433/", "127.0.0.1"],
      ["http://0x7f.0.0.1/", "127.0.0.1"],
      ["http://0177.0.0.1/", "127.0.0.1"],
      ["http://0.0.0.0/", "127.0.0.1"],
      ["http://0/", "127.0.0.1"],
      ["http://[::1]/", "[::1]"],
      ["http://[0:0:0:0:0:0:0:1]/", "[::1]"],
      ["http://[::]/", "127.0.0.1"],
      ["http://[::ffff:127.0.0.1]/", "127.0.0.1"],
      ["http://[::ffff:7f00:2]/", "127.0.0.2"],
      ["http://[::127.0.0.1]/", "127.0.0.1"],
      ["http://[::ffff:0.0.0.0]/", "127.0.0.1"],
    ];
    for (const [url, address] of cases) {
      expect({ url, address: loopbackAddress(hostOf(url)) }).toEqual({ url, address });
    }
  });

  it("leaves every other host alone", () => {
    for (const url of [
      "http://models.local/",
      "http://localhost.example.com/",
      "http://mylocalhost/",
      "http://128.0.0.1/",
      "http://10.0.0.1/",
      "http://0.0.0.1/",
      "http://[::2]/",
      "http://[::ffff:10.0.0.1]/",
      "http://[fe80::1]/",
      "http://[2001:db8::127:0:0:1]/",
      "http://api.openai.com/",
    ]) {
      expect({ url, address: loopbackAddress(hostOf(url)) }).toEqual({ url, address: undefined });
    }
  });
});

describe("embeddedIpv4", () => {
  it("reads the IPv4 address of mapped and compatible forms only", () => {
    expect(embeddedIpv4("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(embeddedIpv4("::ffff:a01:203")).toBe("10.1.2.3");
    expect(embeddedIpv4("::10.1.2.3")).toBe("10.1.2.3");
    expect(embeddedIpv4("64:ff9b::10.1.2.3")).toBeUndefined();
    expect(embeddedIpv4("fe80::1")).toBeUndefined();
    expect(embeddedIpv4("not:an:address")).toBeUndefined();
  });
});

describe("isLinkLocalOrMetadata", () => {
  it("knows the metadata services' addresses in every notation the URL parser leaves", () => {
    for (const url of [
      "http://169.254.169.254/",
      "http://2852039166/",
      "http://0xa9fea9fe/",
      "http://169.254.1.1:8080/",
      "http://[fd00:ec2::254]/",
      "http://[FD00:EC2:0:0:0:0:0:254]/",
      "http://[fe80::1]/",
      "http://[febf::1]/",
      "http://[::ffff:169.254.169.254]/",
      "http://[::169.254.169.254]/",
      "http://[64:ff9b::169.254.169.254]/",
    ]) {
      expect({ url, linkLocal: isLinkLocalOrMetadata(new URL(url).hostname) }).toEqual({
        url,
        linkLocal: true,
      });
    }
  });

  it("leaves every other host alone", () => {
    for (const url of [
      "http://169.255.0.1/",
      "http://10.0.0.1/",
      "http://127.0.0.1/",
      "http://[fec0::1]/",
      "http://[fd00:ec2::253]/",
      "http://[::ffff:10.0.0.1]/",
      "http://[2001:db8::a9fe:a9fe]/",
      "http://metadata.google.internal/",
      "http://api.openai.com/",
    ]) {
      expect({ url, linkLocal: isLinkLocalOrMetadata(new URL(url).hostname) }).toEqual({
        url,
        linkLocal: false,
      });
    }
  });
});
