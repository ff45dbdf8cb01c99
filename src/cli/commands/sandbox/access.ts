import { Sandbox, type SandboxTokenScope } from "../../../sandbox/index.js";
import type { SignedUrlOptions, TokenOptions } from "../../program/sandbox.js";
import { connectionFrom, definedOnly } from "./options.js";
import { formatJson } from "./table.js";

type Write = (text: string) => void;

const stdout: Write = (text) => process.stdout.write(text);

/** `url`: prints a URL that reads (or with --put writes, once) one path without a key. */
export async function signedUrl(
  id: string,
  path: string,
  options: SignedUrlOptions,
  write = stdout,
): Promise<number> {
  const sandbox = await Sandbox.connect(id, connectionFrom(options));
  const signed = await sandbox.files.signedUrl(path, {
    method: options.put ? "PUT" : "GET",
    ...definedOnly({ expiresIn: options.expires, maxBytes: options.maxBytes }),
  });
  write(options.json ? formatJson(signed) : `${signed.url}\n`);
  return 0;
}

/** `token`: prints a new sandbox token (its value is shown this once). */
export async function sandboxToken(
  id: string,
  options: TokenOptions,
  write = stdout,
): Promise<number> {
  const sandbox = await Sandbox.connect(id, connectionFrom(options));
  const created = await sandbox.createToken({
    scopes: options.scope as SandboxTokenScope[],
    ...definedOnly({ expiresIn: options.expires, origin: options.origin }),
  });
  write(options.json ? formatJson(created) : `${created.token}\n`);
  return 0;
}
