import { Hono } from "hono";
import type { z } from "zod";
import {
  createSecretStoreRequestSchema,
  secretKeySchema,
  secretStoreNameSchema,
  setSecretRequestSchema,
  updateSecretStoreRequestSchema,
} from "../../core/wire/secrets.js";
import { describeIssues } from "../../core/zod-message.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import type { SecretStores } from "../store/secret-vault.js";
import { parseInput } from "./input.js";
import { checkWithinAllowlist, hostPatterns } from "./secret-hosts.js";

/**
 * `/api/secret-stores`: stores with their allowlists, and write-only secrets. No answer ever
 * holds a value: the API lists keys, hosts and times. Every check is made before anything is
 * written, so a refused request changes nothing.
 */
export function secretRoutes(stores: SecretStores) {
  const notFound = (name: string) =>
    new ApiError(
      "not_found",
      `this project has no secret store "${name}"; create it with POST /api/secret-stores (cairn secrets create)`,
    );
  // A body that may hold a value is never quoted back, not even by the JSON parser's message.
  const body = async <T extends z.ZodType>(request: Request, schema: T) =>
    parseInput(schema, await readJson(request, { quoteBody: false }));

  return new Hono<{ Variables: AuthVariables }>()
    .post("/api/secret-stores", async (c) => {
      const request = await body(c.req.raw, createSecretStoreRequestSchema);
      const allowlist = hostPatterns(request.allowlist, "allowlist");
      const projectId = c.get("project").id;
      if (!(await stores.create(projectId, request.name, allowlist))) {
        throw new ApiError(
          "conflict",
          `this project already has a secret store "${request.name}"; change its allowlist with PATCH /api/secret-stores/${request.name}`,
        );
      }
      return c.json(await stores.get(projectId, request.name), 201);
    })
    .get("/api/secret-stores", async (c) =>
      c.json({ stores: await stores.list(c.get("project").id) }),
    )
    .get("/api/secret-stores/:name", async (c) => {
      const name = pathParameter(secretStoreNameSchema, c.req.param("name"), "store");
      const store = await stores.get(c.get("project").id, name);
      if (store === undefined) throw notFound(name);
      return c.json(store);
    })
    .patch("/api/secret-stores/:name", async (c) => {
      const name = pathParameter(secretStoreNameSchema, c.req.param("name"), "store");
      const request = await body(c.req.raw, updateSecretStoreRequestSchema);
      const allowlist = hostPatterns(request.allowlist, "allowlist");
      const projectId = c.get("project").id;
      const store = await stores.get(projectId, name);
      if (store === undefined) throw notFound(name);
      // A secret's own hosts must stay inside the allowlist.
      for (const secret of store.secrets) {
        if (secret.hosts !== null) {
          checkWithinAllowlist(
            secret.hosts,
            allowlist,
            `allowlist: the hosts of secret ${secret.key}`,
          );
        }
      }
      // Deleted meanwhile (through another instance): as if it had not been found.
      if (!(await stores.setAllowlist(projectId, name, allowlist))) throw notFound(name);
      return c.json(await stores.get(projectId, name));
    })
    .delete("/api/secret-stores/:name", async (c) => {
      const name = pathParameter(secretStoreNameSchema, c.req.param("name"), "store");
      if (!(await stores.delete(c.get("project").id, name))) throw notFound(name);
      return c.json({ deleted: name });
    })
    .put("/api/secret-stores/:name/secrets/:key", async (c) => {
      const name = pathParameter(secretStoreNameSchema, c.req.param("name"), "store");
      const key = pathParameter(secretKeySchema, c.req.param("key"), "key");
      const request = await body(c.req.raw, setSecretRequestSchema);
      const projectId = c.get("project").id;
      const store = await stores.get(projectId, name);
      if (store === undefined) throw notFound(name);
      let hosts: string[] | null = null;
      if (request.hosts !== undefined) {
        hosts = hostPatterns(request.hosts, "hosts");
        checkWithinAllowlist(hosts, store.allowlist, "hosts");
      }
      const result = await stores.setSecret(projectId, name, key, request.value, hosts);
      if (result === false) throw notFound(name);
      const secret = (await stores.get(projectId, name))?.secrets.find((each) => each.key === key);
      return c.json({ store: name, ...secret }, result === "created" ? 201 : 200);
    })
    .delete("/api/secret-stores/:name/secrets/:key", async (c) => {
      const name = pathParameter(secretStoreNameSchema, c.req.param("name"), "store");
      const key = pathParameter(secretKeySchema, c.req.param("key"), "key");
      const projectId = c.get("project").id;
      if (!(await stores.has(projectId, name))) throw notFound(name);
      if (!(await stores.deleteSecret(projectId, name, key))) {
        throw new ApiError("not_found", `secret store "${name}" has no secret "${key}"`);
      }
      return c.json({ deleted: key, store: name });
    });
}

/** A parameter of the path as `schema` reads it, or a 400 naming it: `key "lower": must be …`. */
function pathParameter<T extends z.ZodType>(schema: T, raw: string, noun: string): z.infer<T> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ApiError(
      "invalid_request",
      `${noun} ${JSON.stringify(raw)} in the path: ${describeIssues(parsed.error)}`,
    );
  }
  return parsed.data;
}
