import type { Context } from "hono";
import { log } from "../../../core/logger.js";
import { UnsealError } from "../../../sandbox/runner/secrets/seal.js";
import { ApiError } from "../../http/api-error.js";
import type { FailedAuthentications } from "../../http/auth.js";
import { parseJsonText } from "../../http/read-json.js";
import type { ChannelStore, StoredChannel } from "./channel-store.js";

/** The one answer to every request a channel does not take as signed, whatever is wrong with it. */
export const notSigned =
  "the request is not signed with this channel's secret within the last 5 minutes, or it was already taken";

/**
 * The raw body of a request to a channel's URL and the channel it names, once `verify` says
 * the request is signed with that channel's secret. Anything else (no such channel, another
 * type, a bad, stale or missing signature) is 401 with one body, counted as a failed
 * authentication of the client's address (too many: 429 before the next is looked at).
 */
export async function signedRequest<T extends StoredChannel["type"]>(
  c: Context,
  type: T,
  channels: ChannelStore,
  failures: FailedAuthentications,
  verify: (secret: string, body: Uint8Array) => boolean,
): Promise<{ channel: Extract<StoredChannel, { type: T }>; secret: string; body: Uint8Array }> {
  await failures.check(c);
  const body = new Uint8Array(await c.req.arrayBuffer());
  const channel = channels.byId(c.req.param("channelId") ?? "");
  const secret = channel?.type === type ? secretOf(channels, channel) : undefined;
  if (channel === undefined || secret === undefined || !verify(secret, body)) {
    await failures.record(c);
    throw new ApiError("unauthorized", notSigned);
  }
  return { channel: channel as Extract<StoredChannel, { type: T }>, secret, body };
}

/** Refuses a request whose event id the channel has taken before: a replay. */
export async function refuseReplay(c: Context, failures: FailedAuthentications): Promise<never> {
  await failures.record(c);
  throw new ApiError("unauthorized", notSigned);
}

function secretOf(channels: ChannelStore, channel: StoredChannel): string | undefined {
  try {
    return channels.signingSecret(channel);
  } catch (error) {
    if (!(error instanceof UnsealError)) throw error;
    // The sender sees the same 401; the operator is told why.
    log.error(`agent channel ${channel.id} cannot check signatures`, error);
    return undefined;
  }
}

/** A signed body as JSON, or a 400 that does not quote it. */
export function parseSignedJson(body: Uint8Array): unknown {
  return parseJsonText(new TextDecoder().decode(body), { quoteBody: false });
}
