import { describe, expect, it } from "vitest";
import { minSecretValueLength } from "../../../core/wire/secrets.js";
import { isPublicAddress, vetTarget } from "./addresses.js";
import { allowedBy, parseHostPattern } from "./host-pattern.js";
import type { SandboxEgressPolicy, SandboxSecret } from "./policy.js";
import { Scrubber, scrubBytes, scrubPatterns } from "./scrub.js";
import { placeholderInUrl, substituteHeaders } from "./substitute.js";

describe("host patterns", () => {
  it("match exactly, wildcards on subdomains only, on the web's ports unless one is named", () => {
    const list = ["api.example.com", "*.cdn.example.com", "models.internal:8443"];
    const allowed = (host: string, port = 443) => allowedBy(list, host, port);
    expect(allowed("api.example.com")).toBe(true);
    expect(allowed("API.Example.COM.")).toBe(true);
    expect(allowed("api.example.com", 80)).toBe(true);
    expect(allowed("api.example.com", 8080)).toBe(false);
    expect(allowed("img.cdn.example.com")).toBe(true);
    expect(allowed("a.b.cdn.example.com")).toBe(true);
    expect(allowed("cdn.example.com")).toBe(false);
    expect(allowed("models.internal", 8443)).toBe(true);
    expect(allowed("models.internal", 443)).toBe(false);
    for (const trick of [
      "evil-api.example.com",
      "api.example.com.evil.io",
      "apiexample.com",
      "xcdn.example.com",
      "api.example.com\u0000.evil.io",
      "api.example.com/evil",
      "api.example.com@evil.io",
      "*.example.com",
      "",
    ]) {
      expect(allowed(trick), trick).toBe(false);
    }
  });

  it("refuse what is not a host pattern, saying why", () => {
    for (const [entry, why] of [
      ["https://a.com", "scheme"],
      ["a.com/x", "scheme"],
      ["*.com", "top-level"],
      ["a.*.com", "wildcard"],
      ["*a.com", "wildcard"],
      ["a.com:99999", "port"],
      ["::1", "brackets"],
      ["[a.com]", "IPv6"],
      ["-a.com", "valid host name"],
      ["*.10.0.0.1", "wildcard"],
      ["1.2.3", "neither"],
    ] as const) {
      const parsed = parseHostPattern(entry);
      expect(typeof parsed, entry).toBe("string");
      expect(parsed, entry).toContain(why);
    }
    expect(parseHostPattern("[::1]:8443")).toEqual({ host: "::1", wildcard: false, port: 8443 });
  });
});

describe("addresses", () => {
  it("are public only outside loopback, private, link-local, metadata and their mapped forms", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fd00:ec2::254",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:a9fe:a9fe",
      "::127.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "224.0.0.1",
      "not an address",
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ["1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:1.1.1.1"]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it("are vetted once, so a name that resolves to a private address is refused", async () => {
    const resolve = (answers: string[]) => async () => answers;
    const none = new Map();
    expect(await vetTarget("api.example.com", 443, [], none, resolve(["93.184.216.34"]))).toEqual({
      address: "93.184.216.34",
      port: 443,
    });
    // Rebinding: a private answer among public ones is never the one dialled.
    expect(
      await vetTarget("api.example.com", 443, [], none, resolve(["127.0.0.1", "93.184.216.34"])),
    ).toEqual({ address: "93.184.216.34", port: 443 });
    expect(await vetTarget("api.example.com", 443, [], none, resolve(["169.254.169.254"]))).toMatch(
      /resolves only to private/,
    );
    expect(await vetTarget("10.0.0.5", 80, ["10.0.0.5"], none)).toEqual({
      address: "10.0.0.5",
      port: 80,
    });
    expect(await vetTarget("10.0.0.6", 80, ["10.0.0.5"], none)).toMatch(/private/);
    // This host and cloud metadata stay shut whatever the allowlist says: a tenant writes it.
    for (const [host, allowlist] of [
      ["127.0.0.1", ["127.0.0.1:7070"]],
      ["127.0.0.1", ["127.0.0.1"]],
      ["169.254.169.254", ["169.254.169.254"]],
      ["::ffff:127.0.0.1", ["[::ffff:127.0.0.1]"]],
      ["::1", ["[::1]"]],
      ["fd00:ec2::254", ["[fd00:ec2::254]"]],
      ["0.0.0.0", ["0.0.0.0"]],
    ] as const) {
      expect(await vetTarget(host, 7070, allowlist, none)).toMatch(/no allowlist opens/);
    }
    const named = new Map([["model.local", { address: "127.0.0.1", port: 8443 }]]);
    expect(await vetTarget("model.local", 443, [], named)).toEqual({
      address: "127.0.0.1",
      port: 8443,
    });
  });
});

const policy: SandboxEgressPolicy = {
  store: "prod",
  allowlist: ["api.example.com", "other.example.com"],
  secrets: [
    {
      key: "API_KEY",
      placeholder: `cairn_sealed_${"a".repeat(32)}`,
      value: "s3cr3t/value+with=chars&more",
      hosts: ["api.example.com"],
    },
  ],
};

describe("substitution", () => {
  it("puts the value only into requests to the secret's hosts", () => {
    const placeholder = policy.secrets[0]?.placeholder as string;
    const headers = { authorization: `Bearer ${placeholder}`, "proxy-authorization": "x" };
    const there = substituteHeaders(headers, policy, "api.example.com", 443);
    expect(there).toEqual({
      headers: { authorization: "Bearer s3cr3t/value+with=chars&more" },
      used: ["API_KEY"],
    });
    expect(substituteHeaders(headers, policy, "other.example.com", 443)).toMatchObject({
      refused: expect.stringContaining("secret API_KEY"),
    });
    expect(placeholderInUrl(`/x?k=${encodeURIComponent(placeholder)}`)).toBeDefined();
    expect(placeholderInUrl("/x?k=1")).toBeUndefined();
  });

  it("never puts in a value too short to scrub (one stored before such values were refused)", () => {
    const secret = policy.secrets[0] as SandboxSecret;
    const headers = { authorization: `Bearer ${secret.placeholder}` };
    const short = "x".repeat(minSecretValueLength - 1);
    const legacy = { ...policy, secrets: [{ ...secret, value: short }] };
    // An answer that echoed it would keep it...
    expect(scrubPatterns(legacy).map((pattern) => pattern.find.toString())).not.toContain(short);
    // ...so a request that carries its placeholder is refused, naming the secret, not the value.
    const refused = substituteHeaders(headers, legacy, "api.example.com", 443);
    expect(refused).toEqual({
      refused: expect.stringContaining(
        "the request to api.example.com carries the placeholder of secret API_KEY, whose value is shorter than 8 characters",
      ),
    });
    expect(JSON.stringify(refused)).not.toContain(short);
    // A request without it goes on; one character more is put in.
    expect(substituteHeaders({ accept: "*/*" }, legacy, "api.example.com", 443)).toEqual({
      headers: { accept: "*/*" },
      used: [],
    });
    const shortest = { ...policy, secrets: [{ ...secret, value: `${short}y` }] };
    expect(substituteHeaders(headers, shortest, "api.example.com", 443)).toEqual({
      headers: { authorization: `Bearer ${short}y` },
      used: ["API_KEY"],
    });
  });

  it("scrubs every form of the value from an answer, across chunk boundaries", () => {
    const value = policy.secrets[0]?.value as string;
    const echoed = [
      value,
      JSON.stringify(value),
      encodeURIComponent(value),
      Buffer.from(value).toString("base64"),
      Buffer.from(`user:${value}`).toString("base64"),
      Buffer.from(`us:${value}`).toString("base64url"),
    ].join(" | ");
    const scrubber = new Scrubber(scrubPatterns(policy));
    const out: Buffer[] = [];
    // One byte at a time: every form is split across chunks.
    for (const byte of Buffer.from(echoed)) out.push(...scrubber.write(Buffer.from([byte])));
    out.push(scrubber.end());
    const text = Buffer.concat(out).toString();
    expect(text).not.toContain(value);
    expect(text).not.toContain(encodeURIComponent(value));
    expect(text).not.toContain(Buffer.from(value).toString("base64").slice(4, 24));
    expect(text).not.toContain(Buffer.from(`user:${value}`).toString("base64").slice(8, 28));
    expect(text).toContain(policy.secrets[0]?.placeholder);
  });

  it("scrubs a value of the shortest length that can be set, also inside longer base64", () => {
    const value = "k9Qz4mWx";
    expect(value).toHaveLength(minSecretValueLength);
    const shortest: SandboxEgressPolicy = {
      ...policy,
      secrets: [{ ...(policy.secrets[0] as SandboxSecret), value }],
    };
    // `user:`, `usr:` and `us:` put the value at each of the three alignments of base64.
    const encoded = ["user:", "usr:", "us:"].map((user) =>
      Buffer.from(`${user}${value}`).toString("base64"),
    );
    const echoed = [value, encodeURIComponent(value), ...encoded].join(" | ");
    const text = scrubBytes(Buffer.from(echoed), scrubPatterns(shortest)).toString();
    expect(text).not.toContain(value);
    const pieces = text.split(" | ").slice(2);
    expect(pieces).toHaveLength(3);
    for (const piece of pieces) {
      // What is left of the value: its last bytes at most, never three in a row.
      const decoded = Buffer.from(piece.replace(/\*/g, "A"), "base64");
      for (let start = 0; start + 3 <= value.length; start++) {
        expect(decoded.includes(value.slice(start, start + 3)), piece).toBe(false);
      }
    }
  });

  it("scrubs a long body cut anywhere as it scrubs it whole", () => {
    const patterns = scrubPatterns(policy);
    const value = policy.secrets[0]?.value as string;
    const forms = [value, encodeURIComponent(value), Buffer.from(`u:${value}`).toString("base64")];
    // 200 kB of text with a form every few kB, cut into chunks of every size from 1 byte to more
    // than the text between two forms: forms fall inside chunks, across two, and across many.
    const parts: string[] = [];
    for (let index = 0; parts.join("").length < 200_000; index++) {
      parts.push("lorem ipsum dolor sit amet ".repeat(index % 300), forms[index % 3] as string);
    }
    const body = Buffer.from(parts.join(""));
    const whole = scrubBytes(body, patterns);
    expect(whole.includes(value)).toBe(false);
    for (const size of [1, 7, 29, 30, 31, 64, 1000, 4096, 65_536]) {
      const scrubber = new Scrubber(patterns);
      const out: Buffer[] = [];
      for (let at = 0; at < body.length; at += size) {
        out.push(...scrubber.write(body.subarray(at, at + size)));
      }
      out.push(scrubber.end());
      expect(Buffer.concat(out).equals(whole), `chunks of ${size} bytes`).toBe(true);
    }
  });
});
