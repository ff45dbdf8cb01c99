// The OTLP trace and logs messages as a protobufjs JSON descriptor, transcribed from
// opentelemetry-proto (common/v1/common.proto, resource/v1/resource.proto, trace/v1/trace.proto,
// collector/trace/v1/trace_service.proto and the logs files below). Field numbers and types are
// the protocol's and must never change; names are the lowerCamelCase of OTLP/JSON, so both
// encodings decode to the same object shape. Fields a later protocol version adds are skipped by
// the decoder.

const keyValueList = { rule: "repeated", type: "opentelemetry.proto.common.v1.KeyValue" };

const common = {
  nested: {
    AnyValue: {
      oneofs: {
        value: {
          oneof: [
            "stringValue",
            "boolValue",
            "intValue",
            "doubleValue",
            "arrayValue",
            "kvlistValue",
            "bytesValue",
          ],
        },
      },
      fields: {
        stringValue: { type: "string", id: 1 },
        boolValue: { type: "bool", id: 2 },
        intValue: { type: "int64", id: 3 },
        doubleValue: { type: "double", id: 4 },
        arrayValue: { type: "ArrayValue", id: 5 },
        kvlistValue: { type: "KeyValueList", id: 6 },
        bytesValue: { type: "bytes", id: 7 },
      },
    },
    ArrayValue: { fields: { values: { rule: "repeated", type: "AnyValue", id: 1 } } },
    KeyValueList: { fields: { values: { rule: "repeated", type: "KeyValue", id: 1 } } },
    KeyValue: {
      fields: {
        key: { type: "string", id: 1 },
        value: { type: "AnyValue", id: 2 },
      },
    },
    InstrumentationScope: {
      fields: {
        name: { type: "string", id: 1 },
        version: { type: "string", id: 2 },
        attributes: { ...keyValueList, id: 3 },
        droppedAttributesCount: { type: "uint32", id: 4 },
      },
    },
    EntityRef: {
      fields: {
        schemaUrl: { type: "string", id: 1 },
        type: { type: "string", id: 2 },
        idKeys: { rule: "repeated", type: "string", id: 3 },
        descriptionKeys: { rule: "repeated", type: "string", id: 4 },
      },
    },
  },
};

const resource = {
  nested: {
    Resource: {
      fields: {
        attributes: { ...keyValueList, id: 1 },
        droppedAttributesCount: { type: "uint32", id: 2 },
        entityRefs: { rule: "repeated", type: "opentelemetry.proto.common.v1.EntityRef", id: 3 },
      },
    },
  },
};

const trace = {
  nested: {
    TracesData: {
      fields: { resourceSpans: { rule: "repeated", type: "ResourceSpans", id: 1 } },
    },
    ResourceSpans: {
      fields: {
        resource: { type: "opentelemetry.proto.resource.v1.Resource", id: 1 },
        scopeSpans: { rule: "repeated", type: "ScopeSpans", id: 2 },
        schemaUrl: { type: "string", id: 3 },
      },
      reserved: [[1000, 1000]],
    },
    ScopeSpans: {
      fields: {
        scope: { type: "opentelemetry.proto.common.v1.InstrumentationScope", id: 1 },
        spans: { rule: "repeated", type: "Span", id: 2 },
        schemaUrl: { type: "string", id: 3 },
      },
    },
    Span: {
      fields: {
        traceId: { type: "bytes", id: 1 },
        spanId: { type: "bytes", id: 2 },
        traceState: { type: "string", id: 3 },
        parentSpanId: { type: "bytes", id: 4 },
        flags: { type: "fixed32", id: 16 },
        name: { type: "string", id: 5 },
        kind: { type: "SpanKind", id: 6 },
        startTimeUnixNano: { type: "fixed64", id: 7 },
        endTimeUnixNano: { type: "fixed64", id: 8 },
        attributes: { ...keyValueList, id: 9 },
        droppedAttributesCount: { type: "uint32", id: 10 },
        events: { rule: "repeated", type: "Event", id: 11 },
        droppedEventsCount: { type: "uint32", id: 12 },
        links: { rule: "repeated", type: "Link", id: 13 },
        droppedLinksCount: { type: "uint32", id: 14 },
        status: { type: "Status", id: 15 },
      },
      nested: {
        SpanKind: {
          values: {
            SPAN_KIND_UNSPECIFIED: 0,
            SPAN_KIND_INTERNAL: 1,
            SPAN_KIND_SERVER: 2,
            SPAN_KIND_CLIENT: 3,
            SPAN_KIND_PRODUCER: 4,
            SPAN_KIND_CONSUMER: 5,
          },
        },
        Event: {
          fields: {
            timeUnixNano: { type: "fixed64", id: 1 },
            name: { type: "string", id: 2 },
            attributes: { ...keyValueList, id: 3 },
            droppedAttributesCount: { type: "uint32", id: 4 },
          },
        },
        Link: {
          fields: {
            traceId: { type: "bytes", id: 1 },
            spanId: { type: "bytes", id: 2 },
            traceState: { type: "string", id: 3 },
            attributes: { ...keyValueList, id: 4 },
            droppedAttributesCount: { type: "uint32", id: 5 },
            flags: { type: "fixed32", id: 6 },
          },
        },
      },
    },
    Status: {
      fields: {
        message: { type: "string", id: 2 },
        code: { type: "StatusCode", id: 3 },
      },
      reserved: [[1, 1]],
      nested: {
        StatusCode: {
          values: { STATUS_CODE_UNSET: 0, STATUS_CODE_OK: 1, STATUS_CODE_ERROR: 2 },
        },
      },
    },
  },
};

const collectorTrace = {
  nested: {
    ExportTraceServiceRequest: {
      fields: {
        resourceSpans: {
          rule: "repeated",
          type: "opentelemetry.proto.trace.v1.ResourceSpans",
          id: 1,
        },
      },
    },
    ExportTraceServiceResponse: {
      fields: { partialSuccess: { type: "ExportTracePartialSuccess", id: 1 } },
    },
    ExportTracePartialSuccess: {
      fields: {
        rejectedSpans: { type: "int64", id: 1 },
        errorMessage: { type: "string", id: 2 },
      },
    },
  },
};

// logs/v1/logs.proto and collector/logs/v1/logs_service.proto. `severityNumber` is the
// SeverityNumber enum, read as its number (the same varint on the wire).
const logs = {
  nested: {
    LogsData: {
      fields: { resourceLogs: { rule: "repeated", type: "ResourceLogs", id: 1 } },
    },
    ResourceLogs: {
      fields: {
        resource: { type: "opentelemetry.proto.resource.v1.Resource", id: 1 },
        scopeLogs: { rule: "repeated", type: "ScopeLogs", id: 2 },
        schemaUrl: { type: "string", id: 3 },
      },
      reserved: [[1000, 1000]],
    },
    ScopeLogs: {
      fields: {
        scope: { type: "opentelemetry.proto.common.v1.InstrumentationScope", id: 1 },
        logRecords: { rule: "repeated", type: "LogRecord", id: 2 },
        schemaUrl: { type: "string", id: 3 },
      },
    },
    LogRecord: {
      fields: {
        timeUnixNano: { type: "fixed64", id: 1 },
        observedTimeUnixNano: { type: "fixed64", id: 11 },
        severityNumber: { type: "int32", id: 2 },
        severityText: { type: "string", id: 3 },
        body: { type: "opentelemetry.proto.common.v1.AnyValue", id: 5 },
        attributes: { ...keyValueList, id: 6 },
        droppedAttributesCount: { type: "uint32", id: 7 },
        flags: { type: "fixed32", id: 8 },
        traceId: { type: "bytes", id: 9 },
        spanId: { type: "bytes", id: 10 },
        eventName: { type: "string", id: 12 },
      },
      reserved: [[4, 4]],
    },
  },
};

const collectorLogs = {
  nested: {
    ExportLogsServiceRequest: {
      fields: {
        resourceLogs: { rule: "repeated", type: "opentelemetry.proto.logs.v1.ResourceLogs", id: 1 },
      },
    },
    ExportLogsServiceResponse: {
      fields: { partialSuccess: { type: "ExportLogsPartialSuccess", id: 1 } },
    },
    ExportLogsPartialSuccess: {
      fields: {
        rejectedLogRecords: { type: "int64", id: 1 },
        errorMessage: { type: "string", id: 2 },
      },
    },
  },
};

/** The descriptor for `protobuf.Root.fromJSON`, rooted at the `opentelemetry` package. */
export const otlpTraceDescriptor = {
  nested: {
    opentelemetry: {
      nested: {
        proto: {
          nested: {
            common: { nested: { v1: common } },
            resource: { nested: { v1: resource } },
            trace: { nested: { v1: trace } },
            logs: { nested: { v1: logs } },
            collector: {
              nested: {
                trace: { nested: { v1: collectorTrace } },
                logs: { nested: { v1: collectorLogs } },
              },
            },
          },
        },
      },
    },
  },
};

/** The full name of the request message of `POST /v1/traces`. */
export const exportTraceServiceRequestName =
  "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest";

/** The full name of the response message of `POST /v1/traces`. */
export const exportTraceServiceResponseName =
  "opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse";

/** The full name of the request message of `POST /v1/logs`. */
export const exportLogsServiceRequestName =
  "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest";

/** The full name of the response message of `POST /v1/logs`. */
export const exportLogsServiceResponseName =
  "opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse";
