import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  cairnSignature,
  slackSignature,
  verifyCairnSignature,
  verifySlackSignature,
} from "./signature.js";

const secret = "whsec_test-secret";
const body = Buffer.from('{"id":"m1","text":"hello"}');
const now = 1_800_000_000;

function v1(text: string, timestamp: number, key = secret): string {
  return createHmac("sha256", key).update(`${timestamp}.${text}`).digest("hex");
}

describe("cairn-signature", () => {
  it("is t=<seconds>,v1=<hex HMAC-SHA256 of '<t>.<body>'>, and verifies", () => {
    const header = cairnSignature(secret, body, now);
    expect(header).toBe(`t=${now},v1=${v1(body.toString(), now)}`);
    expect(verifyCairnSignature(header, secret, body, now)).toBe(true);
  });

  it("refuses another secret, a body changed after signing, and a missing header", () => {
    const header = cairnSignature(secret, body, now);
    expect(verifyCairnSignature(header, "whsec_other", body, now)).toBe(false);
    const tampered = Buffer.from(body.toString().replace("hello", "hellp"));
    expect(verifyCairnSignature(header, secret, tampered, now)).toBe(false);
    expect(verifyCairnSignature(undefined, secret, body, now)).toBe(false);
  });

  it("takes 5 minutes either way, and not a second more", () => {
    for (const skew of [-300, 0, 300]) {
      const header = cairnSignature(secret, body, now + skew);
      expect(verifyCairnSignature(header, secret, body, now)).toBe(true);
    }
    for (const skew of [-301, 301, -86_400]) {
      const header = cairnSignature(secret, body, now + skew);
      expect(verifyCairnSignature(header, secret, body, now)).toBe(false);
    }
  });

  it("refuses a timestamp that is not plain digits, or given twice", () => {
    const mac = v1(body.toString(), now);
    for (const header of [
      `t=${now}.0,v1=${mac}`,
      `t=1.8e9,v1=${v1(body.toString(), 1.8e9)}`,
      `t=-${now},v1=${mac}`,
      `t= ${now},v1=${mac}`,
      `t=${now},t=${now},v1=${mac}`,
      `v1=${mac}`,
      `t=${now}`,
      `t=${now},v1=${mac.slice(0, 63)}`,
      `t=${now},v1=${mac}=`,
      `t=${now},v1=${"z".repeat(64)}`,
    ]) {
      expect(verifyCairnSignature(header, secret, body, now), header).toBe(false);
    }
  });

  it("takes one matching v1 among several (a sender rolling its secret)", () => {
    const header = `t=${now},v1=${v1(body.toString(), now, "old")},v1=${v1(body.toString(), now)}`;
    expect(verifyCairnSignature(header, secret, body, now)).toBe(true);
  });
});

describe("Slack's signature v0", () => {
  it("matches the example of Slack's documentation", () => {
    // https://api.slack.com/authentication/verifying-requests-from-slack
    const example = Buffer.from(
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c",
    );
    const signature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
    const signingSecret = "8f742231b10e8888abcd99yyyzzz85a5";
    expect(slackSignature(signingSecret, "1531420618", example)).toBe(signature);
    expect(verifySlackSignature(signature, "1531420618", signingSecret, example, 1531420618)).toBe(
      true,
    );
  });

  it("refuses a stale timestamp, a changed body, another secret and a missing header", () => {
    const timestamp = String(now);
    const signature = slackSignature(secret, timestamp, body);
    expect(verifySlackSignature(signature, timestamp, secret, body, now + 301)).toBe(false);
    expect(verifySlackSignature(signature, timestamp, secret, Buffer.from("{}"), now)).toBe(false);
    expect(verifySlackSignature(signature, timestamp, "other-secret", body, now)).toBe(false);
    expect(verifySlackSignature(undefined, timestamp, secret, body, now)).toBe(false);
    expect(verifySlackSignature(signature, undefined, secret, body, now)).toBe(false);
    // The timestamp is signed: another one in the header does not pass with the same signature.
    expect(verifySlackSignature(signature, String(now + 1), secret, body, now)).toBe(false);
    expect(
      verifySlackSignature(signature.replace("v0=", "v1="), timestamp, secret, body, now),
    ).toBe(false);
  });
});
