import type { ChatMessage } from "./types.js";

/** The text of a message's text parts, joined. */
export function messageText(message: ChatMessage | undefined): string {
  if (message === undefined) return "";
  return message.parts
    .map((part) => (part.type === "text" ? part.text : ""))
    .join("")
    .trim();
}

const safeMedia = /^(https?:|blob:|data:image\/(png|jpe?g|gif|webp|avif);)/i;

/** True for a URL an attachment preview may load: no script, no other origin's file. */
export function isSafeMediaUrl(url: string): boolean {
  return safeMedia.test(url);
}
