import type { z } from "zod";
import type { errorStatuses } from "../http/api-error.js";

/** A JSON response of the OpenAPI document. */
export const json = (schema: z.ZodType, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** The error responses of a route, by code, each with the error body. */
export type ErrorResponses = (
  ...codes: Array<keyof typeof errorStatuses>
) => Record<string, ReturnType<typeof json>>;
