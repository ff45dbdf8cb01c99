import { Hono } from "hono";
import {
  createSecretStoreRequestSchema,
  secretKeySchema,
  secretStoreNameSchema,
  setSecretRequestSchema,
  updateSecretStoreRequestSchema,
} from "../../core/wire/secrets.js";
import {
  formatHostPattern,
  hostMatches,
  parseHostPattern,
} from "../../sandbox/runner/egress/host-pattern.js";
import { ApiError } from "../http/api-error.js";
import type { AuthVariables } from "../http/auth.js";
import { readJson } from "../http/read-json.js";
import type { SecretStores } from "../store/secret-stores.js";
import { parseInput } from "./input.js";

/**
 * `/api/secret-stores`: stores with their allowlists, and write-only secrets. No answer ever
 * holds a value: the API lists keys, hosts and times.
 */
export function secretRoutes(stores: SecretStores) {
  const notFound = (name: string) =>
    new ApiError("not_found", `this project has no secret store "${name}"`);
  const storeName = (raw: string) => parseInput(secretStoreNameSchema, raw);
  const secretKey = (raw: string) => parseInput(secretKeySchema, raw);

  return new Hono<{ Variables: AuthVariables }>()
    .post("/api/secret-stores", async (c) => {
      const body = parseInput(createSecretStoreRequestSchema, await readJson(c.req.raw));
      const allowlist = hostPatterns(body.allowlist, "allowlist");
      if (!stores.create(c.get("project").id, body.name, allowlist)) {
        throw new ApiError("conflict", `this project already has a secret store "${body.name}"`);
      }
      return c.json(stores.get(c.get("project").id, body.name), 201);
    })
    .get("/api/secret-stores", (c) => c.json({ stores: stores.list(c.get("project").id) }))
    .get("/api/secret-stores/:name", (c) => {
      const name = storeName(c.req.param("name"));
      const store = stores.get(c.get("project").id, name);
      if (store === undefined) throw notFound(name);
      return c.json(store);
    })
    .patch("/api/secret-stores/:name", async (c) => {
      const name = storeName(c.req.param("name"));
      const body = parseInput(updateSecretStoreRequestSchema, await readJson(c.req.raw));
      const allowlist = hostPatterns(body.allowlist, "allowlist");
      const projectId = c.get("project").id;
      const store = stores.get(projectId, name);
      if (store === undefined) throw notFound(name);
      // A secret's own hosts must stay inside the allowlist.
      for (const secret of store.secrets) {
        if (secret.hosts !== null) withinAllowlist(secret.hosts, allowlist, `secret ${secret.key}`);
      }
      stores.setAllowlist(projectId, name, allowlist);
      return c.json(stores.get(projectId, name));
    })
    .delete("/api/secret-stores/:name", (c) => {
      const name = storeName(c.req.param("name"));
      if (!stores.delete(c.get("project").id, name)) throw notFound(name);
      return c.json({ deleted: name });
    })
    .put("/api/secret-stores/:name/secrets/:key", async (c) => {
      const name = storeName(c.req.param("name"));
      const key = secretKey(c.req.param("key"));
      const body = parseInput(setSecretRequestSchema, await readJson(c.req.raw));
      const projectId = c.get("project").id;
      const store = stores.get(projectId, name);
      if (store === undefined) throw notFound(name);
      let hosts: string[] | null = null;
      if (body.hosts !== undefined) {
        hosts = hostPatterns(body.hosts, "hosts");
        withinAllowlist(hosts, store.allowlist, "hosts");
      }
      const result = stores.setSecret(projectId, name, key, body.value, hosts);
      if (result === false) throw notFound(name);
      const secret = stores.get(projectId, name)?.secrets.find((each) => each.key === key);
      return c.json({ store: name, ...secret }, result === "created" ? 201 : 200);
    })
    .delete("/api/secret-stores/:name/secrets/:key", (c) => {
      const name = storeName(c.req.param("name"));
      const key = secretKey(c.req.param("key"));
      const projectId = c.get("project").id;
      if (!stores.has(projectId, name)) throw notFound(name);
      if (!stores.deleteSecret(projectId, name, key)) {
        throw new ApiError("not_found", `secret store "${name}" has no secret "${key}"`);
      }
      return c.json({ deleted: key, store: name });
    });
}

/** Host patterns in their canonical form, or a 400 naming the first that is not one. */
function hostPatterns(entries: readonly string[], field: string): string[] {
  const canonical = entries.map((entry, index) => {
    const pattern = parseHostPattern(entry);
    if (typeof pattern === "string") {
      throw new ApiError(
        "invalid_request",
        `${field}[${index}] ${JSON.stringify(entry)} ${pattern}`,
      );
    }
    return formatHostPattern(pattern);
  });
  return [...new Set(canonical)];
}

/**
 * Checks that every host pattern is covered by the allowlist: the same entry, or a name or
 * subdomain pattern inside a wildcard of the allowlist, on an allowed port.
 */
function withinAllowlist(hosts: readonly string[], allowlist: readonly string[], field: string) {
  const outside = hosts.filter((text) => !covered(text, allowlist));
  if (outside.length > 0) {
    throw new ApiError(
      "invalid_request",
      `${field}: ${outside.join(", ")} ${outside.length === 1 ? "is" : "are"} not on the store's allowlist (${allowlist.join(", ")}); a secret can only be used where the sandbox may go`,
    );
  }
}

function covered(text: string, allowlist: readonly string[]): boolean {
  if (allowlist.includes(text)) return true;
  const pattern = parseHostPattern(text);
  if (typeof pattern === "string") return false;
  const ports = pattern.port === undefined ? [80, 443] : [pattern.port];
  // A wildcard is covered by a wildcard over the same or a parent name: its subdomain "x.".
  const sample = pattern.wildcard ? `x.${pattern.host}` : pattern.host;
  return allowlist.some((entry) => {
    const allowed = parseHostPattern(entry);
    if (typeof allowed === "string") return false;
    if (pattern.wildcard && !allowed.wildcard) return false;
    return ports.every((port) => hostMatches(allowed, sample, port));
  });
}
