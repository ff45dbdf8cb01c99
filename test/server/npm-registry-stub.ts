// A local npm registry for the agents' package tests: node:http serving each package's
// packument and a tarball made here with tar, as registry.npmjs.org does for `npm install`.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A package to serve: its name, version and files (package.json is made from them). */
export interface StubPackage {
  readonly name: string;
  readonly version: string;
  readonly files: Readonly<Record<string, string>>;
  readonly manifest?: Readonly<Record<string, unknown>>;
}

export interface NpmRegistryStub {
  readonly port: number;
  /** Every request's method and path, in order. */
  readonly requests: string[];
  /** The registry's URL as the sandboxes know it, `http://<host>:<port>/`. */
  urlFor(host: string): string;
  close(): Promise<void>;
}

/** The .tgz npm expects: every file under `package/`. */
function tarball(pkg: StubPackage): Buffer {
  const folder = mkdtempSync(join(tmpdir(), "cairn-npm-stub-"));
  try {
    const root = join(folder, "package");
    mkdirSync(root);
    const manifest = { name: pkg.name, version: pkg.version, ...pkg.manifest };
    writeFileSync(join(root, "package.json"), JSON.stringify(manifest));
    for (const [path, content] of Object.entries(pkg.files)) {
      writeFileSync(join(root, path), content);
    }
    const file = join(folder, "package.tgz");
    execFileSync("tar", ["czf", file, "-C", folder, "package"]);
    return readFileSync(file);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * Serves `packages` at `/<name>` (the packument, its tarball URLs on the host the request came
 * for) and `/<name>/-/<name>-<version>.tgz`; anything else is npm's 404.
 */
export async function startNpmRegistryStub(
  packages: readonly StubPackage[],
): Promise<NpmRegistryStub> {
  const tarballs = new Map(packages.map((pkg) => [pkg.name, tarball(pkg)]));
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://stub").pathname);
    requests.push(`${request.method} ${path}`);
    const send = (status: number, type: string, body: string | Buffer) => {
      response.writeHead(status, { "content-type": type });
      response.end(body);
    };
    for (const pkg of packages) {
      const bytes = tarballs.get(pkg.name) as Buffer;
      const file = `/${pkg.name}/-/${pkg.name.split("/").at(-1)}-${pkg.version}.tgz`;
      if (path === file) return send(200, "application/octet-stream", bytes);
      if (path !== `/${pkg.name}`) continue;
      const origin = `http://${request.headers.host}`;
      const packument = {
        name: pkg.name,
        "dist-tags": { latest: pkg.version },
        versions: {
          [pkg.version]: {
            name: pkg.name,
            version: pkg.version,
            ...pkg.manifest,
            dist: {
              tarball: `${origin}${file}`,
              shasum: createHash("sha1").update(bytes).digest("hex"),
              integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
            },
          },
        },
      };
      return send(200, "application/json", JSON.stringify(packument));
    }
    send(404, "application/json", JSON.stringify({ error: "Not found" }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    port,
    requests,
    urlFor: (host) => `http://${host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
