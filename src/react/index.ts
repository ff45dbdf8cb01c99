// `cairn-ai/react`: the provider, its hook, and the kit's components (each with its headless
// hook). Styles: `import "cairn-ai/react/styles.css"`.

export * from "../components/chat/index.js";
export * from "../components/file-manager/index.js";
export * from "../components/status/index.js";
export * from "../components/upload/index.js";
export type { CairnClient, CairnClientOptions } from "./cairn-client.js";
export { createCairnClient } from "./cairn-client.js";
export { CairnProvider, type CairnProviderProps, useCairn } from "./cairn-provider.js";
