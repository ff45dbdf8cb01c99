import type { z } from "zod";

/**
 * One sentence naming every problem zod found, with the path of each, for error messages that a
 * person can act on: `option "kind": … ; option "tags.0": …`.
 */
export function describeIssues(error: z.ZodError, noun = "field"): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      if (issue.code === "unrecognized_keys") {
        const keys = issue.keys.map((key) => `"${path ? `${path}.` : ""}${key}"`).join(", ");
        return `${noun}${issue.keys.length > 1 ? "s" : ""} ${keys} ${issue.keys.length > 1 ? "are" : "is"} not supported`;
      }
      return path ? `${noun} "${path}": ${issue.message}` : issue.message;
    })
    .join("; ");
}
