// Apart from the schemas, so that the CLI can name the scopes without loading zod.

/** What a sandbox token may do: read files, write files, run and follow execs. */
export const sandboxTokenScopes = ["read", "write", "exec"] as const;

export type SandboxTokenScope = (typeof sandboxTokenScopes)[number];
