import type { SpanKind } from "../../../../core/wire/index.js";
import type { AttributeReader } from "../attribute-reader.js";
import type { OtlpSpanRecord } from "../otlp-records.js";
import { aiSdk } from "./ai-sdk.js";
import type { ConventionFields, Found, FoundUsage } from "./fields.js";
import { genAi, previousGenAi } from "./gen-ai.js";
import { openInference } from "./openinference.js";
import { openLlmetry } from "./openllmetry.js";

/** Token counts read from a span; prompt and completion are present together or not at all. */
export interface MappedUsage {
  readonly prompt: number;
  readonly completion: number;
  readonly total: number | undefined;
  readonly cached: number | undefined;
  readonly reasoning: number | undefined;
}

/** A span's fields as the GenAI conventions give them, merged. */
export interface MappedFields {
  readonly kind: SpanKind;
  readonly name: string | undefined;
  readonly model: string | undefined;
  readonly usage: MappedUsage | undefined;
  readonly cost: number | undefined;
  readonly input: string | undefined;
  readonly output: string | undefined;
  readonly session: string | undefined;
  readonly user: string | undefined;
  readonly tags: string[] | undefined;
  readonly metadata: Record<string, unknown> | undefined;
  readonly error: string | undefined;
}

/**
 * Reads a span with every convention Cairn knows, in order of preference: OpenInference (what
 * Cairn's SDK writes), the AI SDK's `ai.*`, the GenAI conventions as they are now, their
 * previous form, and OpenLLMetry's `traceloop.*`. Each field comes from the first convention
 * that has it; the attributes holding exactly that value (in any convention) are lifted out of
 * the span's remaining attributes, and attributes a field was built from stay.
 */
export function mapConventions(reader: AttributeReader, span: OtlpSpanRecord): MappedFields {
  const all = [
    openInference(reader),
    aiSdk(reader),
    genAi(reader),
    previousGenAi(reader, span),
    openLlmetry(reader),
  ];
  const pick = <T>(field: (fields: ConventionFields) => Found<T> | undefined) =>
    choose(reader, all.map(field));
  const usage = (field: keyof FoundUsage) => pick((fields) => fields.usage?.[field]);
  const prompt = usage("prompt");
  const completion = usage("completion");
  return {
    kind: pick((fields) => fields.kind) ?? "chain",
    name: pick((fields) => fields.name),
    model: pick((fields) => fields.model),
    // Either count may be missing (an embedding reports only its input); the other is then 0.
    usage:
      prompt === undefined && completion === undefined
        ? undefined
        : {
            prompt: prompt ?? 0,
            completion: completion ?? 0,
            total: usage("total"),
            cached: usage("cached"),
            reasoning: usage("reasoning"),
          },
    cost: pick((fields) => fields.cost),
    input: pick((fields) => fields.input),
    output: pick((fields) => fields.output),
    session: pick((fields) => fields.session),
    user: chooseKept(all.map((fields) => fields.user)),
    tags: pick((fields) => fields.tags),
    metadata: pick((fields) => fields.metadata),
    error: chooseKept(all.map((fields) => fields.error)),
  };
}

// The first value, lifting every attribute (of any convention) that holds that same value,
// so aliases such as `llm.model_name` and `gen_ai.request.model` go, and a differing one stays.
function choose<T>(reader: AttributeReader, candidates: ReadonlyArray<Found<T> | undefined>) {
  const chosen = candidates.find((candidate) => candidate !== undefined);
  if (chosen === undefined) return undefined;
  const same = JSON.stringify(chosen.value);
  for (const candidate of candidates) {
    if (candidate !== undefined && JSON.stringify(candidate.value) === same) {
      reader.lift(candidate.keys);
    }
  }
  return chosen.value;
}

// For fields kept as attributes (user, error type): the value, nothing lifted.
function chooseKept<T>(candidates: ReadonlyArray<Found<T> | undefined>): T | undefined {
  return candidates.find((candidate) => candidate !== undefined)?.value;
}
