import { createHmac, timingSafeEqual } from "node:crypto";

/** How far a signed request's timestamp may be from the service's clock, either way: 5 minutes. */
export const signatureWindowSeconds = 300;

/** The header a webhook channel's messages and replies are signed in. */
export const cairnSignatureHeader = "cairn-signature";

/** The current time in whole Unix seconds, as signatures carry it. */
export function unixSeconds(now = Date.now()): number {
  return Math.floor(now / 1000);
}

function hmac(secret: string, signed: Buffer): Buffer {
  return createHmac("sha256", secret).update(signed).digest();
}

function signedBytes(prefix: string, body: Uint8Array | string): Buffer {
  return Buffer.concat([Buffer.from(prefix, "utf8"), Buffer.from(body)]);
}

/** Whether `given` (hex) is `expected`, compared in constant time. */
function matches(expected: Buffer, given: string): boolean {
  if (!/^[0-9a-f]{64}$/i.test(given)) return false;
  return timingSafeEqual(expected, Buffer.from(given, "hex"));
}

// Digits only: "1e9", " 17", "0x…" and negative numbers are no timestamps.
function freshTimestamp(text: string | undefined, nowSeconds: number): boolean {
  if (text === undefined || !/^\d{1,12}$/.test(text)) return false;
  return Math.abs(nowSeconds - Number(text)) <= signatureWindowSeconds;
}

/**
 * The `cairn-signature` value of a body: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
 * "<t>.<body>")>`, the secret's UTF-8 bytes as the key.
 */
export function cairnSignature(
  secret: string,
  body: Uint8Array | string,
  nowSeconds = unixSeconds(),
): string {
  const mac = hmac(secret, signedBytes(`${nowSeconds}.`, body)).toString("hex");
  return `t=${nowSeconds},v1=${mac}`;
}

/**
 * Whether `header` signs `body` with `secret`, at a time within 5 minutes of now. More than one
 * `v1=` may be given (a sender rolling its secret); one that matches is enough.
 */
export function verifyCairnSignature(
  header: string | undefined,
  secret: string,
  body: Uint8Array,
  nowSeconds = unixSeconds(),
): boolean {
  if (header === undefined || header.length > 1024) return false;
  const fields = header.split(",").map((field) => field.trim().split("="));
  const times = fields.filter(([name]) => name === "t");
  const timestamp = times.length === 1 ? times[0]?.[1] : undefined;
  if (timestamp === undefined || !freshTimestamp(timestamp, nowSeconds)) return false;
  const expected = hmac(secret, signedBytes(`${timestamp}.`, body));
  return fields.some(
    ([name, value, ...rest]) =>
      name === "v1" && value !== undefined && rest.length === 0 && matches(expected, value),
  );
}

/** Slack's request signature v0: `v0=<hex HMAC-SHA256(secret, "v0:<timestamp>:<body>")>`. */
export function slackSignature(secret: string, timestamp: string, body: Uint8Array | string) {
  return `v0=${hmac(secret, signedBytes(`v0:${timestamp}:`, body)).toString("hex")}`;
}

/**
 * Whether a request came from Slack: `X-Slack-Signature` signs the body with the app's signing
 * secret, and `X-Slack-Request-Timestamp` is within 5 minutes of now.
 */
export function verifySlackSignature(
  signature: string | undefined,
  timestamp: string | undefined,
  secret: string,
  body: Uint8Array,
  nowSeconds = unixSeconds(),
): boolean {
  if (signature === undefined || timestamp === undefined) return false;
  if (!freshTimestamp(timestamp, nowSeconds) || !signature.startsWith("v0=")) return false;
  const expected = hmac(secret, signedBytes(`v0:${timestamp}:`, body));
  return matches(expected, signature.slice(3));
}
