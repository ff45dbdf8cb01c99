// IP literals as the URL parser and DNS give them, read without node:net (browsers load core/).

/**
 * The eight 16-bit words of an IPv6 address (`::1`, `::ffff:127.0.0.1`, `fe80::1`), or
 * undefined when it is not one.
 */
export function ipv6Words(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const parts = (dotted[1] as string).split(".").map(Number);
    const hex = `${(((parts[0] as number) << 8) | (parts[1] as number)).toString(16)}:${(((parts[2] as number) << 8) | (parts[3] as number)).toString(16)}`;
    text = text.slice(0, dotted.index) + hex;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const headWords = head === "" ? [] : head.split(":");
  const tailWords = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - headWords.length - tailWords.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined;
  const words = [
    ...headWords,
    ...Array<string>(tail === undefined ? 0 : missing).fill("0"),
    ...tailWords,
  ];
  if (!words.every((word) => /^[0-9a-f]{1,4}$/.test(word))) return undefined;
  return words.map((word) => Number.parseInt(word, 16));
}

/**
 * The IPv4 address an IPv6 one carries in its last 32 bits: `::ffff:a.b.c.d` (IPv4-mapped) and
 * `::a.b.c.d` (IPv4-compatible), in either spelling; undefined for any other.
 */
export function embeddedIpv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (words === undefined) return undefined;
  const prefixZero = words.slice(0, 5).every((word) => word === 0);
  if (!prefixZero || (words[5] !== 0xffff && words[5] !== 0)) return undefined;
  const high = words[6] as number;
  const low = words[7] as number;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * Whether a URL's host (`url.hostname`, brackets and all) names the machine the call is made
 * from, and the loopback address it stands for: `localhost` and its subdomains, `0.0.0.0`, `::`
 * and the IPv6 forms of a 127.x address stand for 127.0.0.1 (or 127.x), `::1` for `[::1]`;
 * undefined for a host that is not loopback. Numbers in other notations (`127.1`,
 * `0x7f000001`) are read as the URL parser has already read them.
 */
export function loopbackAddress(hostname: string): string | undefined {
  const host = hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "127.0.0.1";
  let ipv4 = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? host : undefined;
  if (host.includes(":")) {
    const words = ipv6Words(host);
    if (words === undefined) return undefined;
    // ::1 and :: (unspecified, which a connection takes for this host).
    if (words.slice(0, 7).every((word) => word === 0) && (words[7] ?? 0) <= 1) {
      return words[7] === 1 ? "[::1]" : "127.0.0.1";
    }
    ipv4 = embeddedIpv4(host);
  }
  if (ipv4 === undefined) return undefined;
  if (ipv4.startsWith("127.")) return ipv4;
  return ipv4 === "0.0.0.0" ? "127.0.0.1" : undefined;
}

/** fd00:ec2::254, the metadata service of EC2 over IPv6. */
const ec2MetadataWords = [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254];

/**
 * Whether a URL's host (`url.hostname`, brackets and all) is a link-local address, where clouds
 * serve their instance metadata: 169.254.0.0/16 and fe80::/10, fd00:ec2::254, and the IPv6 forms
 * (IPv4-mapped, IPv4-compatible, NAT64) of a 169.254.x address.
 */
export function isLinkLocalOrMetadata(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return host.startsWith("169.254.");
  const words = host.includes(":") ? ipv6Words(host) : undefined;
  if (words === undefined) return false;
  if (((words[0] as number) & 0xffc0) === 0xfe80) return true;
  if (words.every((word, index) => word === ec2MetadataWords[index])) return true;
  // 169.254 (0xa9fe) in the last 32 bits of an IPv4-mapped, IPv4-compatible or NAT64 address.
  const nat64 = words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0);
  return (nat64 || embeddedIpv4(host) !== undefined) && words[6] === 0xa9fe;
}
