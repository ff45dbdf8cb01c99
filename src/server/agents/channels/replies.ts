import { log } from "../../../core/logger.js";
import type { WebhookReply } from "../../../core/wire/agent-channels.js";
import { parseAgentSecretReference } from "../../../core/wire/agents.js";
import type { SecretStores } from "../../store/secret-vault.js";
import { botTokenProblem } from "./bot-token.js";
import type { ChannelConfigs } from "./channel-store.js";
import { type OutboundPolicy, type PostResult, postWithRetries } from "./outbound.js";
import { cairnSignature, cairnSignatureHeader } from "./signature.js";

/** What replies are sent with: where they may go, and the waits between tries. */
export interface ReplyOptions {
  readonly policy: OutboundPolicy;
  /** Default 1 s, 2 s, 4 s, 8 s: five tries. */
  readonly retryDelaysMs?: readonly number[] | undefined;
  /** True once the service is closing: no more tries. */
  readonly isClosing: () => boolean;
}

/** The longest text Slack shows in one message (its limit is 40,000 characters). */
const maxSlackText = 39_000;

function retries(options: ReplyOptions, signal: AbortSignal) {
  return {
    signal,
    isClosing: options.isClosing,
    ...(options.retryDelaysMs === undefined ? {} : { delaysMs: options.retryDelaysMs }),
  };
}

function failure(result: PostResult & { attempts: number }): string | undefined {
  if (result.status === undefined) return `${result.problem} (${result.attempts} tries)`;
  if (result.status >= 300) {
    return `it answered ${result.status}${result.status >= 500 ? ` (${result.attempts} tries)` : " (not tried again)"}`;
  }
  return undefined;
}

/**
 * POSTs a webhook channel's reply to its callback URL, signed as the messages it takes are
 * (`cairn-signature`, signed again for each try), tried again on 5xx and connection errors.
 */
export async function sendWebhookReply(
  channel: { id: string; config: ChannelConfigs["webhook"] },
  secret: string,
  reply: WebhookReply,
  options: ReplyOptions,
  signal: AbortSignal,
): Promise<void> {
  const body = JSON.stringify(reply);
  const result = await postWithRetries(
    new URL(channel.config.callbackUrl),
    () => ({ body, headers: { [cairnSignatureHeader]: cairnSignature(secret, body) } }),
    options.policy,
    retries(options, signal),
  );
  const problem = failure(result);
  // A channel deleted, or a service closing, ends its deliveries: nothing went wrong.
  if (problem !== undefined && !signal.aborted && !options.isClosing()) {
    log.warn(
      `agent channel ${channel.id}: the reply to ${reply.inReplyTo} was not delivered to its callback URL: ${problem}`,
    );
  }
}

/**
 * Posts a reply in a Slack thread with `chat.postMessage`, with the bot token opened from the
 * vault here, on the host. Slack answers 200 with `{ok: false, error}` when it refuses: logged.
 */
export async function postSlackMessage(
  channel: { id: string; projectId: string; config: ChannelConfigs["slack"] },
  vault: SecretStores,
  message: { channel: string; thread_ts: string; text: string },
  options: ReplyOptions,
  signal: AbortSignal,
): Promise<void> {
  const url = new URL(`${channel.config.apiBaseUrl.replace(/\/+$/, "")}/chat.postMessage`);
  // Checked again at each reply: the store may have changed since the channel was made.
  const problem = await botTokenProblem(vault, channel.projectId, channel.config.botToken, url);
  const { store, key } = parseAgentSecretReference(channel.config.botToken);
  const token =
    problem === undefined ? await vault.openSecret(channel.projectId, store, key) : undefined;
  if (token === undefined) {
    log.warn(
      `agent channel ${channel.id}: no reply posted to Slack: ${problem?.message ?? "the bot token is gone"}`,
    );
    return;
  }
  const text =
    message.text.length > maxSlackText ? `${message.text.slice(0, maxSlackText)}…` : message.text;
  const result = await postWithRetries(
    url,
    () => ({
      body: JSON.stringify({ ...message, text }),
      headers: { authorization: `Bearer ${token}` },
    }),
    options.policy,
    retries(options, signal),
  );
  const refusal =
    failure(result) ?? (result.status === undefined ? undefined : slackRefusal(result.body));
  if (refusal !== undefined && !signal.aborted && !options.isClosing()) {
    log.warn(`agent channel ${channel.id}: Slack's chat.postMessage failed: ${refusal}`);
  }
}

function slackRefusal(body: string): string | undefined {
  try {
    const answer = JSON.parse(body) as { ok?: unknown; error?: unknown };
    if (answer.ok === true) return undefined;
    return `Slack answered ok: false, error ${JSON.stringify(answer.error ?? "unknown")}`;
  } catch {
    return "Slack's answer is not JSON";
  }
}
