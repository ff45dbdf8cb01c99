import type { FailedAuthentications } from "../../http/auth.js";
import type { SecretStores } from "../../store/secret-vault.js";
import type { ChannelStore } from "./channel-store.js";
import type { ChannelTurns } from "./channel-turns.js";
import type { ReplyOptions } from "./replies.js";

/** What the channels' routes share. */
export interface ChannelParts {
  readonly channels: ChannelStore;
  readonly turns: ChannelTurns;
  readonly vault: SecretStores;
  /** Failed signatures count with failed keys, per client address. */
  readonly failures: FailedAuthentications;
  readonly replies: ReplyOptions;
  /** Resolves once the channels changed here are copied to the shared database (if any). */
  readonly settled: () => Promise<void>;
}
