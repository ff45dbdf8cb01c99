import { z } from "zod";

/** A secret store's name: as a template's, lowercase letters, digits and `-`. */
export const secretStoreNameSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    "must be 1-63 lowercase letters, digits and -, starting with a letter or digit",
  );

/** A secret's key: an environment variable's name, as the sandbox sees `CAIRN_SECRET_<KEY>`. */
export const secretKeySchema = z
  .string()
  .regex(
    /^[A-Z_][A-Z0-9_]{0,127}$/,
    "must be 1-128 capital letters, digits and _, not starting with a digit (the sandbox sees CAIRN_SECRET_<KEY>)",
  );

/** The largest secret value, in bytes of UTF-8. */
export const maxSecretValueBytes = 65_536;

/**
 * The shortest secret value, and the shortest text the egress proxy scrubs from answers. Shorter
 * text occurs by chance in ordinary answers, so scrubbing it would mangle them; a value that
 * short could then come back to the sandbox from an upstream that echoes it, so it is refused
 * when set. One constant for both, so that every value that can be set is scrubbed: the schema
 * counts characters (code points, as JSON Schema's minLength), the proxy UTF-16 units, which are
 * never fewer.
 */
export const minSecretValueLength = 8;

// A lone surrogate has no UTF-8 form: stored, it would silently become U+FFFD.
const loneSurrogate = /[\uD800-\uDFFF]/u;

/**
 * A secret's value: 8 characters to 64 KiB of UTF-8, no NUL. The messages never quote it: an
 * answer that refuses a value must not carry it back.
 */
export const secretValueSchema = z
  .string()
  .min(1, { error: "the value is empty", abort: true })
  .min(
    minSecretValueLength,
    `the value is shorter than ${minSecretValueLength} characters: the egress proxy cannot keep a value this short out of the answers a sandbox reads (it would match ordinary text), so it is refused; real API keys and tokens are longer`,
  )
  .refine((value) => !value.includes("\0"), "the value contains a NUL character")
  .refine(
    (value) => !loneSurrogate.test(value),
    "the value is not valid Unicode (a lone surrogate)",
  )
  .refine(
    (value) => new TextEncoder().encode(value).length <= maxSecretValueBytes,
    "the value is over 64 KiB (65,536 bytes of UTF-8)",
  );

// Entries are checked one by one by the service (host patterns: name, *.name, [v6], :port).
const hostList = z.array(z.string().max(300)).max(100, "at most 100 hosts");

/** `POST /api/secret-stores`. */
export const createSecretStoreRequestSchema = z.strictObject({
  name: secretStoreNameSchema,
  allowlist: hostList.min(1, "give at least one host the sandbox may reach"),
});

/** `PATCH /api/secret-stores/{name}`. */
export const updateSecretStoreRequestSchema = z.strictObject({
  allowlist: hostList.min(1, "give at least one host the sandbox may reach"),
});

/** `PUT /api/secret-stores/{name}/secrets/{key}`. */
export const setSecretRequestSchema = z.strictObject({
  value: secretValueSchema,
  /** Where the proxy may substitute it; default the store's allowlist. */
  hosts: hostList
    .min(1, "give at least one host, or leave hosts out for the whole allowlist")
    .optional(),
});

/** A secret as the API shows it: never its value. */
export const secretInfoSchema = z.object({
  key: z.string(),
  hosts: z.array(z.string()).nullable().describe("null: the store's allowlist"),
  createdAt: z.string(),
  updatedAt: z.string(),
  problem: z
    .string()
    .nullable()
    .describe(
      `why sandboxes cannot use the value: it cannot be decrypted (another master key, changed bytes), or it is shorter than ${minSecretValueLength} characters (set before such values were refused); null when they can`,
    ),
});

/** A secret store as the API shows it. */
export const secretStoreSchema = z.object({
  name: z.string(),
  allowlist: z.array(z.string()),
  secrets: z.array(secretInfoSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** `GET /api/secret-stores`. */
export const secretStoreListSchema = z.object({ stores: z.array(secretStoreSchema) });

/** `PUT /api/secret-stores/{name}/secrets/{key}`: the secret as stored, without its value. */
export const setSecretAnswerSchema = secretInfoSchema.extend({ store: z.string() });

/** `DELETE /api/secret-stores/{name}`: the store deleted. */
export const deletedSecretStoreSchema = z.object({ deleted: z.string() });

/** `DELETE /api/secret-stores/{name}/secrets/{key}`: the key deleted, and its store. */
export const deletedSecretSchema = z.object({ deleted: z.string(), store: z.string() });

export type SecretStoreInfo = z.infer<typeof secretStoreSchema>;
export type SecretInfo = z.infer<typeof secretInfoSchema>;
export type CreateSecretStoreRequest = z.infer<typeof createSecretStoreRequestSchema>;
export type SetSecretRequest = z.infer<typeof setSecretRequestSchema>;
