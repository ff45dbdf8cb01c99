import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import {
  createSecretStoreRequestSchema,
  deletedSecretSchema,
  deletedSecretStoreSchema,
  minSecretValueLength,
  secretKeySchema,
  secretStoreListSchema,
  secretStoreNameSchema,
  secretStoreSchema,
  setSecretAnswerSchema,
  setSecretRequestSchema,
  updateSecretStoreRequestSchema,
} from "../../core/wire/secrets.js";
import { type ErrorResponses, json } from "./route-helpers.js";

const body = (schema: z.ZodType) => ({
  body: { content: { "application/json": { schema } } },
});
const store = z.object({ name: secretStoreNameSchema.describe("the store's name") });
const secret = store.extend({
  key: secretKeySchema.describe("the secret's key; sandboxes see CAIRN_SECRET_<key>"),
});

const hostPatterns =
  "Host patterns: api.example.com, *.example.com (subdomains only, not the apex), an IPv4 address, or an IPv6 address in brackets, each optionally with :port (1-65535; without one, 80 and 443). Stored lower-cased, without a trailing dot, IPv6 compressed; no scheme, path, user, whitespace or other wildcard. A refused entry is a 400 naming it (allowlist[2], hosts[0]).";

/** The secret store routes of the OpenAPI document: write-only secrets, never a value back. */
export function secretStoreRoutes(errors: ErrorResponses, common: object): RouteConfig[] {
  return [
    {
      method: "post",
      path: "/api/secret-stores",
      summary: "Create a secret store: the hosts its sandboxes may reach",
      description: `A sandbox created with secretStore reaches only the store's allowlist, through its egress proxy. ${hostPatterns}`,
      request: body(createSecretStoreRequestSchema),
      responses: {
        201: json(secretStoreSchema, "the store, without secrets"),
        ...errors("invalid_request", "conflict", "unsupported_media_type"),
        ...common,
      },
    },
    {
      method: "get",
      path: "/api/secret-stores",
      summary: "The project's secret stores: allowlists, keys, hosts and times, never a value",
      description:
        "A secret whose value this service cannot decrypt (sealed under another master key, or its stored bytes changed) has a problem naming its store and key.",
      responses: { 200: json(secretStoreListSchema, "the stores"), ...common },
    },
    {
      method: "get",
      path: "/api/secret-stores/{name}",
      summary: "One secret store: its allowlist and its secrets' keys, hosts and times",
      request: { params: store },
      responses: {
        200: json(secretStoreSchema, "the store"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
    {
      method: "patch",
      path: "/api/secret-stores/{name}",
      summary: "Replace a store's allowlist",
      description: `Refused (400) when a secret's own hosts would fall outside the new allowlist. Running sandboxes follow it from their next request. ${hostPatterns}`,
      request: { params: store, ...body(updateSecretStoreRequestSchema) },
      responses: {
        200: json(secretStoreSchema, "the store"),
        ...errors("invalid_request", "not_found", "unsupported_media_type"),
        ...common,
      },
    },
    {
      method: "delete",
      path: "/api/secret-stores/{name}",
      summary: "Delete a store and its secrets",
      description:
        "Sandboxes created with it lose their egress (every proxied request gets 407) and their placeholders mean nothing.",
      request: { params: store },
      responses: {
        200: json(deletedSecretStoreSchema, "deleted"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
    {
      method: "put",
      path: "/api/secret-stores/{name}/secrets/{key}",
      summary: "Set a secret, or replace its value",
      description: `The value is sealed with AES-256-GCM under the service's master key and never returned. Sandboxes using the store get CAIRN_SECRET_<key>=cairn_sealed_… (a placeholder bound to each sandbox); the proxy puts the value into request headers for the secret's hosts only. Replacing a value keeps the placeholders of running sandboxes. hosts: where the value may be sent, inside the store's allowlist (default: all of it). A value is ${minSecretValueLength} characters to 64 KiB of UTF-8 without NUL: a shorter one is refused, as the egress proxy cannot keep a value that short out of the answers a sandbox reads (it would match ordinary text); real API keys and tokens are longer. A refusal never quotes the value. ${hostPatterns}`,
      request: { params: secret, ...body(setSecretRequestSchema) },
      responses: {
        201: json(setSecretAnswerSchema, "set: a new secret"),
        200: json(setSecretAnswerSchema, "replaced"),
        ...errors("invalid_request", "not_found", "unsupported_media_type"),
        ...common,
      },
    },
    {
      method: "delete",
      path: "/api/secret-stores/{name}/secrets/{key}",
      summary: "Delete a secret",
      description:
        "Its placeholders mean nothing from then on; a secret set again under the key gets new ones.",
      request: { params: secret },
      responses: {
        200: json(deletedSecretSchema, "deleted"),
        ...errors("invalid_request", "not_found"),
        ...common,
      },
    },
  ];
}
