import type { SandboxService } from "./service.js";

const services = new WeakMap<object, SandboxService>();

/** Notes which sandbox service a started server runs; returns the server. */
export function withSandboxService<Server extends object>(
  service: SandboxService,
  server: Server,
): Server {
  services.set(server, service);
  return server;
}

/**
 * The sandbox service (its runner) of a server that `createServer` started in this process:
 * for the service's own parts and its tests, which need the runner's internal options (mounts,
 * kept workspaces, egress allowances) that no HTTP route offers. Not part of the public API.
 */
export function sandboxServiceOf(server: object): SandboxService | undefined {
  return services.get(server);
}
