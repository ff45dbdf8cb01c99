import { z } from "zod";
import { type SandboxTokenScope, sandboxTokenScopes } from "./sandbox-token-scopes.js";

export { type SandboxTokenScope, sandboxTokenScopes };

/** The longest a signed URL or a sandbox token may live: 24 hours, in seconds. */
export const maxAccessSeconds = 86_400;

/** How long a grant lives, in whole seconds: 1 to 24 hours. */
export const accessLifetimeSchema = (name: string) =>
  z
    .number({ error: `${name} must be a whole number of seconds` })
    .int(`${name} must be a whole number of seconds`)
    .min(1, `${name} must be between 1 and ${maxAccessSeconds} (24 hours)`)
    .max(maxAccessSeconds, `${name} must be between 1 and ${maxAccessSeconds} (24 hours)`);

/** `POST /api/sandboxes/{id}/files/signed-url`. */
export const signedUrlRequestSchema = z.strictObject({
  path: z.string({ error: "path must be a path under /workspace" }).min(1, "path is empty"),
  method: z.enum(["GET", "PUT"], { error: 'method must be "GET" (read) or "PUT" (write)' }),
  expiresInSeconds: accessLifetimeSchema("expiresInSeconds").default(900),
  maxBytes: z
    .number({ error: "maxBytes must be a whole number of bytes" })
    .int("maxBytes must be a whole number of bytes")
    .min(1, "maxBytes must be at least 1")
    .max(Number.MAX_SAFE_INTEGER, "maxBytes is too large")
    .optional(),
});

export type SignedUrlRequest = z.input<typeof signedUrlRequestSchema>;

/** The answer: a URL that does that one thing, without a key, until `expiresAt`. */
export const signedUrlSchema = z.object({
  url: z.string(),
  method: z.enum(["GET", "PUT"]),
  path: z.string().describe("the path it names, absolute under /workspace"),
  expiresAt: z.string().describe("ISO 8601"),
  maxBytes: z.number().int().nullable(),
});

export type SignedUrl = z.infer<typeof signedUrlSchema>;

/** An origin as a browser sends it: scheme, host and port, no path. */
export const originSchema = z
  .string()
  .max(300, "origin is longer than 300 characters")
  .refine(isOrigin, "origin must be a page's origin such as https://app.example.com (no path)");

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value;
  } catch {
    return false;
  }
}

/** `POST /api/sandboxes/{id}/tokens`. */
export const createSandboxTokenRequestSchema = z.strictObject({
  scopes: z
    .array(z.enum(sandboxTokenScopes, { error: 'each scope must be "read", "write" or "exec"' }), {
      error: 'scopes must be a list of "read", "write" and "exec"',
    })
    .min(1, 'give at least one scope: "read", "write" or "exec"')
    .refine((scopes) => new Set(scopes).size === scopes.length, "scopes lists a scope twice"),
  expiresInSeconds: accessLifetimeSchema("expiresInSeconds").default(3600),
  origin: originSchema.optional(),
});

export type CreateSandboxTokenRequest = z.input<typeof createSandboxTokenRequestSchema>;

/** A token as listed: never its value. */
export const sandboxTokenInfoSchema = z.object({
  id: z.string().describe("sbt_ + 24 hex"),
  sandboxId: z.string(),
  scopes: z.array(z.enum(sandboxTokenScopes)),
  origin: z.string().nullable(),
  createdAt: z.string(),
  expiresAt: z.string(),
  revokedAt: z.string().nullable(),
});

export type SandboxTokenInfo = z.infer<typeof sandboxTokenInfoSchema>;

/** The answer to a create: the token's value, shown this once. */
export const createdSandboxTokenSchema = sandboxTokenInfoSchema.extend({
  token: z.string().describe("cairn_sbt_…: shown once, stored hashed"),
});

export type CreatedSandboxToken = z.infer<typeof createdSandboxTokenSchema>;

export const sandboxTokenListSchema = z.object({ tokens: z.array(sandboxTokenInfoSchema) });
