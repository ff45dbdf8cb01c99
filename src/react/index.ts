// `cairn-ai/react`: the provider and hooks. Components arrive in their own folders.
export type { CairnClient, CairnClientOptions } from "./cairn-client.js";
export { createCairnClient } from "./cairn-client.js";
export { CairnProvider, type CairnProviderProps, useCairn } from "./cairn-provider.js";
