import { z } from "zod";

/** A secret store's name: as a template's, lowercase letters, digits and `-`. */
export const secretStoreNameSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    "a store name is 1-63 lowercase letters, digits and -, starting with a letter or digit",
  );

/** A secret's key: an environment variable's name, as the sandbox sees `CAIRN_SECRET_<KEY>`. */
export const secretKeySchema = z
  .string()
  .regex(
    /^[A-Z_][A-Z0-9_]{0,127}$/,
    "a secret key is 1-128 capital letters, digits and _, not starting with a digit (it becomes CAIRN_SECRET_<KEY>)",
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
  value: z
    .string()
    .min(1, "the value is empty")
    .max(65_536, "a value is at most 64 KiB")
    .refine((value) => !value.includes("\0"), "the value contains a NUL character"),
  /** Where the proxy may substitute it; default the store's allowlist. */
  hosts: hostList.min(1).optional(),
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
      "why the value cannot be decrypted (another master key, changed bytes); null when it can",
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

export type SecretStoreInfo = z.infer<typeof secretStoreSchema>;
export type CreateSecretStoreRequest = z.infer<typeof createSecretStoreRequestSchema>;
export type SetSecretRequest = z.infer<typeof setSecretRequestSchema>;
