import { z } from "zod";

/** An entry of a sandbox directory listing, or what `stat` says of a path. */
export const fileEntrySchema = z.object({
  name: z.string(),
  path: z.string().describe("absolute, under /workspace"),
  type: z.enum(["file", "directory", "symlink", "other"]),
  size: z.number().int(),
  mtime: z.string().describe("ISO 8601"),
});

/** `GET /api/sandboxes/{id}/files?path=<a directory>`. */
export const fileListSchema = z.object({ path: z.string(), entries: z.array(fileEntrySchema) });

/** `PUT /api/sandboxes/{id}/files?path=…`: the file written. */
export const fileWrittenSchema = z.object({ path: z.string(), bytes: z.number().int() });

export type FileEntry = z.infer<typeof fileEntrySchema>;
