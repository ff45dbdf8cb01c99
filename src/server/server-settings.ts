import { environment, integerSetting } from "../core/config.js";
import { ConfigurationError } from "../core/errors/index.js";
import { type JudgeConfig, judgeFromEnvironment } from "../tracing/scoring/judge.js";
import type { ServerOptions } from "./create-server.js";
import { type ClientAddressOf, clientAddressOf } from "./http/client-address.js";
import { ingestWorkerCount } from "./ingest/worker-ingester.js";
import { advertisedUrl, presenceTimingsOf } from "./sandboxes/instances.js";
import type { PresenceTimings } from "./sandboxes/runner-presence.js";

/** createServer()'s settings that options and environment give, each checked. */
export interface Settings {
  readonly databaseUrl: string | undefined;
  readonly retentionDays: number | undefined;
  readonly advertiseUrl: string | undefined;
  readonly presence: PresenceTimings;
  readonly clientAddress: ClientAddressOf;
  readonly workers: number;
  readonly judgeConfig: JudgeConfig | undefined;
  readonly port: number;
}

/**
 * The settings of `options`, else of the environment: a ConfigurationError naming the first
 * that is wrong, before createServer() touches the data directory.
 */
export function checkedSettings(options: ServerOptions): Settings {
  const settings: Settings = {
    databaseUrl: options.database ?? environment("databaseUrl"),
    retentionDays: retentionDaysOf(options.retentionDays),
    advertiseUrl: checkedAdvertiseUrl(options.advertiseUrl ?? environment("advertiseUrl")),
    presence: presenceTimingsOf(options.presence),
    clientAddress: clientAddressOf(options.trustedProxies),
    workers: ingestWorkerCount(options.ingestWorkers),
    judgeConfig: options.judge ?? judgeFromEnvironment(),
    port: integerSetting("port", options.port, {
      min: 0,
      max: 65_535,
      fallback: 7070,
      option: "port",
    }),
  };
  if (settings.advertiseUrl !== undefined && settings.databaseUrl === undefined) {
    throw new ConfigurationError(
      `the advertised URL (${options.advertiseUrl === undefined ? "CAIRN_ADVERTISE_URL" : "advertiseUrl, --advertise-url"}) is where the other instances on a shared PostgreSQL store reach this one: give a database URL (--database, CAIRN_DATABASE_URL) too`,
    );
  }
  return settings;
}

/**
 * The advertised URL as given, refused now when it is not one (before the data directory is
 * used).
 */
function checkedAdvertiseUrl(given: string | undefined): string | undefined {
  if (given !== undefined) advertisedUrl(given, "", 0);
  return given;
}

function retentionDaysOf(given: number | undefined): number | undefined {
  const text = environment("retentionDays");
  if (given === undefined && text === undefined) return undefined;
  return integerSetting("retentionDays", given, {
    min: 1,
    max: 36_500,
    fallback: 0,
    option: "retentionDays",
  });
}
