// The way out of the terminal by keyboard. Tab goes to the shell (completion), so Escape, then
// Tab, moves the focus on instead. A lone Escape is held back a moment, and sent when the next
// key comes (or after `holdMs`): dropped when that key is the Tab that leaves, so that the shell
// is not left waiting for the rest of an escape sequence (bash would read the next key typed,
// back in the terminal, as Meta and that key).

const escapeByte = "\x1b";

export interface EscapeThenTab {
  /** What the emulator gives to send (xterm's onData). */
  data(data: string): void;
  /** Each key event first (xterm's custom key handler): false lets the browser move the focus. */
  key(event: KeyboardEvent): boolean;
  /** Sends an Escape still held. */
  flush(): void;
}

export function escapeThenTab(send: (data: string) => void, holdMs = 200): EscapeThenTab {
  let held: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (held === undefined) return;
    clearTimeout(held);
    held = undefined;
    send(escapeByte);
  };
  return {
    data(data) {
      flush();
      if (data === escapeByte) held = setTimeout(flush, holdMs);
      else send(data);
    },
    key(event) {
      if (event.type !== "keydown" || event.key !== "Tab" || held === undefined) return true;
      clearTimeout(held);
      held = undefined;
      return false;
    },
    flush,
  };
}
