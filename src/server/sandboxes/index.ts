// The service's sandbox half: the runner it starts, its HTTP routes and the exec WebSocket.
export { execTokenCaller, execWebSocketRoutes } from "./exec-websocket.js";
export { sandboxRoutes } from "./routes.js";
export {
  runnerNameFor,
  type SandboxOptions,
  type SandboxService,
  startSandboxService,
} from "./service.js";
