// The agent core's host side: where the built core is. Not a public entry point; the service
// imports it, and the protocol from ./protocol.js.
export { agentCorePath } from "./agent-core-path.js";
