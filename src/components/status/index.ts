// The status component: its store, headless hook and styled component.
export { CairnStatus, type CairnStatusProps, type TestRunProgress } from "./cairn-status.js";
export { type SandboxStatusSnapshot, SandboxStatusStore } from "./status-store.js";
export {
  type SandboxStatus,
  type UseSandboxStatusOptions,
  useSandboxStatus,
} from "./use-sandbox-status.js";
