import { Sandbox, type SandboxRecord, type SandboxStatus } from "../../../sandbox/index.js";
import { formatTable } from "../../../tracing/evals/text-table.js";
import { UsageError } from "../../program/cairn-command.js";
import type {
  CreateOptions,
  JsonOptions,
  ListOptions,
  ResizeOptions,
  TagsOptions,
} from "../../program/sandbox.js";
import { connectionFrom, definedOnly } from "./options.js";
import { formatJson, formatMegabytes, formatTime } from "./table.js";

type Write = (text: string) => void;

const stdout: Write = (text) => process.stdout.write(text);
const finalStatuses: ReadonlySet<SandboxStatus> = new Set(["stopped", "failed", "expired"]);

/** `create`: prints the new sandbox's id, or its record with --json. */
export async function createSandbox(options: CreateOptions, write = stdout): Promise<number> {
  const sandbox = await Sandbox.create({
    ...connectionFrom(options),
    ...definedOnly({
      template: options.template,
      timeout: options.timeout,
      cpuCount: options.cpu,
      memoryMB: options.memory,
      diskMB: options.disk,
      secretStore: options.secretStore,
    }),
    tags: { ...options.tag },
  });
  write(options.json ? formatJson(sandbox.record) : `${sandbox.id}\n`);
  return 0;
}

/** `ls`: the project's sandboxes as a table, newest first. */
export async function listSandboxes(options: ListOptions, write = stdout): Promise<number> {
  const sandboxes = await Sandbox.list({
    ...connectionFrom(options),
    ...definedOnly({ tag: options.tag, status: options.status }),
  });
  if (options.json) {
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
export async function killSandbox(
  id: string,
  options: JsonOptions,
  write = stdout,
): Promise<number> {
  const sandbox = await Sandbox.connect(id, connectionFrom(options));
  const record = await sandbox.kill();
  write(options.json ? formatJson(record) : `${record.id} ${record.status}\n`);
  return 0;
}

/** `tags`: prints the tags, or replaces them with the pairs given (none with --clear). */
export async function sandboxTags(
  id: string,
  tags: Readonly<Record<string, string>> | undefined,
  options: TagsOptions,
  write = stdout,
): Promise<number> {
  if (options.clear && tags !== undefined) {
    throw new UsageError("give key=value pairs or --clear, not both");
  }
  const sandbox = await Sandbox.connect(id, connectionFrom(options));
  const record =
    options.clear || tags !== undefined ? await sandbox.setTags({ ...tags }) : sandbox.record;
  if (options.json) write(formatJson(record.tags));
  else for (const [key, value] of Object.entries(record.tags)) write(`${key}=${value}\n`);
  return 0;
}

/** `resize`: changes CPU and memory while it runs, and extends its lifetime. */
export async function resizeSandbox(
  id: string,
  options: ResizeOptions,
  write = stdout,
): Promise<number> {
  const { cpu: cpuCount, memory: memoryMB, timeout } = options;
  if (cpuCount === undefined && memoryMB === undefined && timeout === undefined) {
    throw new UsageError("give --cpu, --memory or --timeout");
  }
  const sandbox = await Sandbox.connect(id, connectionFrom(options));
  let record: SandboxRecord = sandbox.record;
  if (cpuCount !== undefined || memoryMB !== undefined) {
    record = await sandbox.resize(definedOnly({ cpuCount, memoryMB }));
  }
  if (timeout !== undefined) record = await sandbox.setTimeout(timeout);
  write(
    options.json
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
