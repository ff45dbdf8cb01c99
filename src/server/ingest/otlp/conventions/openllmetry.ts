import type { SpanKind } from "../../../../core/wire/index.js";
import { type AttributeReader, name, sessionId, text } from "../attribute-reader.js";
import { type ConventionFields, derived, type Found } from "./fields.js";
import { stringOf } from "./messages.js";

// `traceloop.span.kind` of OpenLLMetry's decorators (workflow, task, agent, tool).
const spanKinds: Readonly<Record<string, SpanKind>> = {
  workflow: "chain",
  task: "chain",
  agent: "agent",
  tool: "tool",
};

const propertiesPrefix = "traceloop.association.properties.";

/**
 * OpenLLMetry's own attributes (Traceloop SDK): `traceloop.span.kind`, `traceloop.entity.name`
 * / `.input` / `.output`, and `traceloop.association.properties.*` (session_id, user_id read
 * as Cairn's session and user; the rest is metadata). Its model calls use the GenAI
 * conventions, read by gen-ai.ts.
 */
export function openLlmetry(reader: AttributeReader): ConventionFields {
  const spanKind = reader.get("traceloop.span.kind");
  const kind = typeof spanKind === "string" ? spanKinds[spanKind] : undefined;
  const properties = propertiesOf(reader);
  return {
    kind: derived(kind),
    name: kind === undefined ? undefined : reader.find(["traceloop.entity.name"], name),
    input: reader.find(["traceloop.entity.input"], text),
    output: reader.find(["traceloop.entity.output"], text),
    session: properties.session,
    user: properties.user,
    metadata: properties.rest,
  };
}

function propertiesOf(reader: AttributeReader) {
  const found = (keys: string[], read = name): Found<string> | undefined =>
    reader.find(
      keys.map((key) => `${propertiesPrefix}${key}`),
      read,
    );
  const session = found(["session_id", "sessionId"], sessionId);
  const user = found(["user_id", "userId"]);
  const rest: Record<string, unknown> = {};
  const keys: string[] = [];
  for (const key of reader.keysUnder(propertiesPrefix)) {
    if (session?.keys.includes(key) || user?.keys.includes(key)) continue;
    const value = reader.get(key);
    if (stringOf(value) === undefined && typeof value !== "number" && typeof value !== "boolean") {
      continue;
    }
    rest[key.slice(propertiesPrefix.length)] = value;
    keys.push(key);
  }
  return { session, user, rest: keys.length === 0 ? undefined : { value: rest, keys } };
}
