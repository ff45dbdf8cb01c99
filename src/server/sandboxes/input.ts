import type { z } from "zod";
import { isSandboxId } from "../../core/ids.js";
import { describeIssues } from "../../core/zod-message.js";
import { ApiError } from "../http/api-error.js";

/** A request's body or query as `schema` reads it, or a 400 that names what is wrong. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ApiError("invalid_request", describeIssues(parsed.error));
  return parsed.data;
}

/** The sandbox id of a path, or a 400 that says what one looks like. */
export function sandboxIdParam(id: string): string {
  if (!isSandboxId(id)) {
    throw new ApiError(
      "invalid_request",
      `"${id}" is not a sandbox id; use the sbx_… id that POST /api/sandboxes returned`,
    );
  }
  return id;
}
