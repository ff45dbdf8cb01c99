// `cairn-ai/react`: the provider, its hook, and the kit's components (each with its headless
// hook). Styles: `import "cairn-ai/react/styles.css"`.
export {
  type CairnClient,
  type CairnClientOptions,
  createCairnClient,
  type TokenUsageCounts,
} from "./cairn-client.js";
export {
  type CairnContextValue,
  CairnProvider,
  type CairnProviderProps,
  useCairn,
} from "./cairn-provider.js";
