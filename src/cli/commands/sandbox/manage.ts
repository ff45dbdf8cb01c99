import { sandboxStatuses } from "../../../core/wire/sandbox.js";
import { Sandbox, type SandboxRecord, type SandboxStatus } from "../../../sandbox/index.js";
import { formatTable } from "../../../tracing/evals/text-table.js";
import {
  connectionFrom,
  definedOnly,
  keyValuePairs,
  noneLeft,
  parseCommand,
  required,
  UsageError,
  wholeNumber,
} from "./arguments.js";
import { formatJson, formatMegabytes, formatTime } from "./table.js";

type Write = (text: string) => void;

const statuses: readonly SandboxStatus[] = sandboxStatuses;
const finalStatuses: ReadonlySet<SandboxStatus> = new Set(["stopped", "failed", "expired"]);

/** `create`: prints the new sandbox's id, or its record with --json. */
export async function createSandbox(args: readonly string[], write: Write): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    template: { type: "string" },
    timeout: { type: "string" },
    cpu: { type: "string" },
    memory: { type: "string" },
    disk: { type: "string" },
    tag: { type: "string", multiple: true },
    json: { type: "boolean" },
  });
  noneLeft(positionals, "cairn sandbox create [--template base] [--tag key=value …]");
  const sandbox = await Sandbox.create({
    ...connectionFrom(values),
    ...definedOnly({
      template: values.template,
      timeout: wholeNumber(values.timeout, "--timeout"),
      cpuCount: wholeNumber(values.cpu, "--cpu"),
      memoryMB: wholeNumber(values.memory, "--memory"),
      diskMB: wholeNumber(values.disk, "--disk"),
    }),
    tags: keyValuePairs(values.tag ?? [], "--tag"),
  });
  write(values.json ? formatJson(sandbox.record) : `${sandbox.id}\n`);
  return 0;
}

/** `ls`: the project's sandboxes as a table, newest first. */
export async function listSandboxes(args: readonly string[], write: Write): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    tag: { type: "string" },
    status: { type: "string" },
    json: { type: "boolean" },
  });
  noneLeft(positionals, "cairn sandbox ls [--tag key[=value]] [--status running]");
  const status = values.status;
  if (status !== undefined && !(statuses as readonly string[]).includes(status)) {
    throw new UsageError(`--status must be one of ${statuses.join(", ")} (got "${status}")`);
  }
  const sandboxes = await Sandbox.list({
    ...connectionFrom(values),
    ...(values.tag === undefined ? {} : { tag: values.tag }),
    ...(status === undefined ? {} : { status: status as SandboxStatus }),
  });
  if (values.json) {
    write(formatJson(sandboxes));
    return 0;
  }
  if (sandboxes.length === 0) {
    write("no sandboxes\n");
    return 0;
  }
  const rows = sandboxes.map((record) => [
    record.id,
    record.status,
    record.template,
    String(record.cpuCount),
    formatMegabytes(record.memoryMB),
    formatMegabytes(record.diskMB),
    formatTags(record.tags) || "-",
    formatTime(record.createdAt),
    finalStatuses.has(record.status) ? "-" : formatTime(record.expiresAt),
  ]);
  const header = [
    "id",
    "status",
    "template",
    "cpu",
    "memory",
    "disk",
    "tags",
    "created (UTC)",
    "expires (UTC)",
  ];
  write(formatTable(header, rows, { rightAligned: new Set([3, 4, 5]) }));
  return 0;
}

/** `kill`: stops the sandbox and prints the status it ended in. */
export async function killSandbox(args: readonly string[], write: Write): Promise<number> {
  const { values, positionals } = parseCommand(args, { json: { type: "boolean" } });
  const [id, ...extra] = positionals;
  const example = "cairn sandbox kill <id>";
  noneLeft(extra, example);
  const sandbox = await Sandbox.connect(required(id, example), connectionFrom(values));
  const record = await sandbox.kill();
  write(values.json ? formatJson(record) : `${record.id} ${record.status}\n`);
  return 0;
}

/** `tags`: prints the tags, or replaces them with the pairs given (none with --clear). */
export async function sandboxTags(args: readonly string[], write: Write): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    clear: { type: "boolean" },
    json: { type: "boolean" },
  });
  const [id, ...pairs] = positionals;
  const sandbox = await Sandbox.connect(
    required(id, "cairn sandbox tags <id> [key=value …] [--clear]"),
    connectionFrom(values),
  );
  if (values.clear && pairs.length > 0) {
    throw new UsageError("give key=value pairs or --clear, not both");
  }
  const record =
    values.clear || pairs.length > 0
      ? await sandbox.setTags(keyValuePairs(pairs, "a tag"))
      : sandbox.record;
  if (values.json) write(formatJson(record.tags));
  else for (const [key, value] of Object.entries(record.tags)) write(`${key}=${value}\n`);
  return 0;
}

/** `resize`: changes CPU and memory while it runs, and extends its lifetime. */
export async function resizeSandbox(args: readonly string[], write: Write): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    cpu: { type: "string" },
    memory: { type: "string" },
    timeout: { type: "string" },
    json: { type: "boolean" },
  });
  const [id, ...extra] = positionals;
  const example = "cairn sandbox resize <id> [--cpu N] [--memory MB] [--timeout SECONDS]";
  noneLeft(extra, example);
  const cpuCount = wholeNumber(values.cpu, "--cpu");
  const memoryMB = wholeNumber(values.memory, "--memory");
  const timeout = wholeNumber(values.timeout, "--timeout");
  if (cpuCount === undefined && memoryMB === undefined && timeout === undefined) {
    throw new UsageError(`give --cpu, --memory or --timeout; usage: ${example}`);
  }
  const sandbox = await Sandbox.connect(required(id, example), connectionFrom(values));
  let record: SandboxRecord = sandbox.record;
  if (cpuCount !== undefined || memoryMB !== undefined) {
    record = await sandbox.resize(definedOnly({ cpuCount, memoryMB }));
  }
  if (timeout !== undefined) record = await sandbox.setTimeout(timeout);
  write(
    values.json
      ? formatJson(record)
      : `${record.id}: ${record.cpuCount} cpu, ${formatMegabytes(record.memoryMB)} memory, expires ${formatTime(record.expiresAt)} UTC\n`,
  );
  return 0;
}

function formatTags(tags: Readonly<Record<string, string>>): string {
  return Object.entries(tags)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
}
