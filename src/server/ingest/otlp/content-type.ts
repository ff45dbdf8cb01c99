import { CairnError } from "../../../core/errors/index.js";

/** How an OTLP body is encoded. */
export type OtlpEncoding = "protobuf" | "json";

const encodings: Readonly<Record<string, OtlpEncoding>> = {
  "application/x-protobuf": "protobuf",
  // The IANA-registered name; some senders use it instead of the x- form.
  "application/protobuf": "protobuf",
  "application/json": "json",
};

/**
 * The encoding a `Content-Type` header names: `application/x-protobuf` (or
 * `application/protobuf`) or `application/json`, parameters allowed. JSON must be UTF-8.
 * `signal` names what the request carries, for the error.
 */
export function parseOtlpContentType(
  contentType: string | undefined,
  signal: "traces" | "logs" = "traces",
): OtlpEncoding {
  const [type = "", ...parameters] = (contentType ?? "").split(";");
  const mediaType = type.trim().toLowerCase();
  const encoding = encodings[mediaType];
  if (encoding === undefined) {
    const given = mediaType === "" ? "no content-type" : `content-type "${mediaType}"`;
    throw new CairnError(
      "unsupported_media_type",
      `OTLP ${signal} need content-type application/x-protobuf or application/json, but the request has ${given}`,
    );
  }
  for (const parameter of parameters) {
    const [name = "", value = ""] = parameter.split("=");
    const charset = value.trim().replace(/^"|"$/g, "").toLowerCase();
    if (name.trim().toLowerCase() === "charset" && charset !== "utf-8" && charset !== "utf8") {
      throw new CairnError(
        "unsupported_media_type",
        `OTLP/JSON must be UTF-8, but the request's content-type says charset=${charset}`,
      );
    }
  }
  return encoding;
}
