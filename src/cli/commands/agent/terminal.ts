// Dim text for the lines that accompany an answer (progress, tool calls), where the stream is a
// terminal that takes colours: https://no-color.org turns them off.
import { styleText } from "node:util";

/** `text` dimmed when `stream` is a colour terminal, as it is otherwise. */
export function dim(text: string, stream: NodeJS.WriteStream): string {
  return styleText("dim", text, { stream, validateStream: true });
}
