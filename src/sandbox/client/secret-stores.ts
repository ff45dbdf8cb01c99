import type { ServiceConnection } from "../../core/config.js";
import {
  deletedSecretSchema,
  deletedSecretStoreSchema,
  type SecretInfo,
  type SecretStoreInfo,
  secretStoreListSchema,
  secretStoreSchema,
  setSecretAnswerSchema,
} from "../../core/wire/secrets.js";
import { resolveConnection, type SandboxConnection, sandboxJson } from "./http.js";

/**
 * The project's secret stores: each an allowlist of the hosts its sandboxes may reach, and
 * write-only secrets the egress proxy puts into requests to those hosts. No call returns a value.
 *
 * @example
 * const stores = new SecretStores();
 * await stores.create("prod", { allowlist: ["api.openai.com"] });
 * await stores.setSecret("prod", "OPENAI_API_KEY", process.env.OPENAI_API_KEY!);
 * const sandbox = await Sandbox.create({ secretStore: "prod" });
 */
export class SecretStores {
  private readonly connection: ServiceConnection;

  constructor(connection: SandboxConnection = {}) {
    this.connection = resolveConnection(connection);
  }

  /** Creates a store. Host patterns: `api.example.com`, `*.example.com`, optionally `:port`. */
  create(name: string, options: { allowlist: readonly string[] }): Promise<SecretStoreInfo> {
    return sandboxJson(this.connection, "POST", "/api/secret-stores", secretStoreSchema, {
      json: { name, allowlist: options.allowlist },
    });
  }

  async list(): Promise<SecretStoreInfo[]> {
    const answer = await sandboxJson(
      this.connection,
      "GET",
      "/api/secret-stores",
      secretStoreListSchema,
    );
    return answer.stores;
  }

  get(name: string): Promise<SecretStoreInfo> {
    return sandboxJson(this.connection, "GET", storePath(name), secretStoreSchema);
  }

  /** Replaces the store's allowlist. */
  setAllowlist(name: string, allowlist: readonly string[]): Promise<SecretStoreInfo> {
    return sandboxJson(this.connection, "PATCH", storePath(name), secretStoreSchema, {
      json: { allowlist },
    });
  }

  /** Deletes the store and its secrets; sandboxes using it lose their egress. */
  async delete(name: string): Promise<void> {
    await sandboxJson(this.connection, "DELETE", storePath(name), deletedSecretStoreSchema);
  }

  /**
   * Sets a secret, or replaces its value: sandboxes using the store keep their placeholder and
   * get the new value from their next request. `hosts`: where the proxy may use it, inside the
   * store's allowlist; default the whole allowlist. Resolves with the secret as stored, without
   * its value. A value is 8 characters to 64 KiB: a shorter one rejects with an
   * `ApiRequestError` (`invalid_request`, 400) saying why, as the egress proxy could not keep it
   * out of the answers a sandbox reads.
   */
  async setSecret(
    store: string,
    key: string,
    value: string,
    options: { hosts?: readonly string[] } = {},
  ): Promise<SecretInfo & { readonly store: string }> {
    return sandboxJson(this.connection, "PUT", secretPath(store, key), setSecretAnswerSchema, {
      json: { value, ...(options.hosts === undefined ? {} : { hosts: options.hosts }) },
    });
  }

  /** Deletes a secret: its placeholder means nothing from then on, in every sandbox. */
  async deleteSecret(store: string, key: string): Promise<void> {
    await sandboxJson(this.connection, "DELETE", secretPath(store, key), deletedSecretSchema);
  }
}

function storePath(name: string): string {
  return `/api/secret-stores/${encodeURIComponent(name)}`;
}

function secretPath(store: string, key: string): string {
  return `${storePath(store)}/secrets/${encodeURIComponent(key)}`;
}
