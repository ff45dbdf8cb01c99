// The terminal: xterm.js over the exec WebSocket in terminal mode. Loaded only when a reader
// opens it (xterm is most of this page's weight). Its colours are the kit's theme, read from
// the page's custom properties and read again when the theme changes; the focus leaves it with
// Escape then Tab (Tab alone goes to the shell, for completion).

import { FitAddon } from "@xterm/addon-fit";
import { type ITheme, Terminal } from "@xterm/xterm";
import { useEffect, useId, useRef, useState } from "react";
import "@xterm/xterm/css/xterm.css";
import { escapeThenTab } from "./escape-then-tab.js";
import {
  openTerminal,
  type TerminalConnection,
  type TerminalExit,
  type TerminalState,
} from "./terminal-connection.js";

const screenReaderKey = "cairn.dashboard.terminal.screenReader";

function storedScreenReader(): boolean {
  try {
    return localStorage.getItem(screenReaderKey) === "on";
  } catch {
    return false;
  }
}

/** The kit's theme as xterm takes it: concrete colours, read from the custom properties. */
function themeOf(element: Element): ITheme {
  const style = getComputedStyle(element);
  const read = (name: string) => style.getPropertyValue(name).trim();
  return {
    background: read("--cairn-bg"),
    foreground: read("--cairn-fg"),
    cursor: read("--cairn-fg"),
    cursorAccent: read("--cairn-bg"),
    selectionBackground: read("--cairn-accent"),
    selectionForeground: read("--cairn-accent-fg"),
  };
}

function describe(state: TerminalState, exit: TerminalExit | undefined, detail?: string): string {
  switch (state) {
    case "starting":
      return "Starting a shell…";
    case "open":
      return "Connected: a shell in /workspace.";
    case "reconnecting":
      return "Connection lost; reconnecting…";
    case "exited":
      if (exit === undefined) return "Hung up.";
      return exit.signal === null
        ? `The shell exited with code ${exit.exitCode ?? "unknown"}.`
        : `The shell was ended by ${exit.signal}.`;
    default:
      return `The terminal stopped: ${detail ?? "no reason given"}.`;
  }
}

export default function SandboxTerminal(props: { sandboxId: string }) {
  const { sandboxId } = props;
  const host = useRef<HTMLDivElement>(null);
  const terminal = useRef<Terminal | undefined>(undefined);
  const connection = useRef<TerminalConnection | undefined>(undefined);
  const hintId = useId();
  const screenReaderId = useId();
  const [state, setState] = useState<TerminalState>("starting");
  const [detail, setDetail] = useState<string | undefined>();
  const [exit, setExit] = useState<TerminalExit | undefined>();
  const [screenReader, setScreenReader] = useState(storedScreenReader);
  /** Each new shell is a new session: the effect below starts it. */
  const [session, setSession] = useState(0);
  const latestScreenReader = useRef(screenReader);
  latestScreenReader.current = screenReader;

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new session is a new shell
  useEffect(() => {
    const element = host.current;
    if (element === null) return undefined;
    setExit(undefined);
    setDetail(undefined);
    const term = new Terminal({
      screenReaderMode: latestScreenReader.current,
      // Whatever colours a program asks for, text stays readable on the theme's background.
      minimumContrastRatio: 4.5,
      fontFamily: getComputedStyle(element).getPropertyValue("--cairn-mono").trim() || "monospace",
      fontSize: 13,
      cursorBlink: true,
      scrollback: 5000,
      theme: themeOf(element),
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(element);
    fit.fit();
    terminal.current = term;
    const input = term.textarea;
    input?.setAttribute("aria-label", `Terminal: a shell in ${sandboxId}`);
    input?.setAttribute("aria-describedby", hintId);

    const opened = openTerminal(
      sandboxId,
      { cols: term.cols, rows: term.rows },
      {
        onOutput: (bytes) => term.write(bytes),
        onState: (next, why) => {
          setState(next);
          setDetail(why);
        },
        onExit: setExit,
      },
    );
    connection.current = opened;
    // Escape, then Tab: the focus moves on instead of Tab going to the shell.
    const keys = escapeThenTab((data) => opened.write(data));
    term.attachCustomKeyEventHandler(keys.key);
    const subscriptions = [
      term.onData(keys.data),
      term.onBinary((data) => opened.write(Uint8Array.from(data, (char) => char.charCodeAt(0)))),
      term.onResize(({ cols, rows }) => opened.resize(cols, rows)),
    ];

    const resizes = new ResizeObserver(() => fit.fit());
    resizes.observe(element);
    const retheme = () => {
      term.options.theme = themeOf(element);
    };
    const themes = new MutationObserver(retheme);
    themes.observe(document.documentElement, { attributeFilter: ["data-cairn-theme"] });
    const scheme = matchMedia("(prefers-color-scheme: dark)");
    scheme.addEventListener("change", retheme);
    // Leaving the page hangs up too (effects do not run when a tab closes).
    const leave = () => opened.close();
    window.addEventListener("pagehide", leave);
    // In sight, and typed into: xterm draws nothing while it is out of the viewport, and its
    // focus does not scroll.
    element.scrollIntoView({ block: "nearest" });
    term.focus();

    return () => {
      window.removeEventListener("pagehide", leave);
      scheme.removeEventListener("change", retheme);
      themes.disconnect();
      resizes.disconnect();
      for (const subscription of subscriptions) subscription.dispose();
      opened.close();
      term.dispose();
      terminal.current = undefined;
      connection.current = undefined;
    };
  }, [sandboxId, session]);

  useEffect(() => {
    if (terminal.current !== undefined) terminal.current.options.screenReaderMode = screenReader;
    try {
      if (screenReader) localStorage.setItem(screenReaderKey, "on");
      else localStorage.removeItem(screenReaderKey);
    } catch {
      // Storage refused: the choice lasts for this page.
    }
  }, [screenReader]);

  const live = state === "starting" || state === "open" || state === "reconnecting";
  return (
    <div className="sbx-terminal-frame">
      <div className="sbx-terminal-bar">
        <p role="status" className="sbx-terminal-state" data-state={state}>
          {describe(state, exit, detail)}
        </p>
        <label className="sbx-check" htmlFor={screenReaderId}>
          <input
            id={screenReaderId}
            type="checkbox"
            checked={screenReader}
            onChange={(event) => setScreenReader(event.currentTarget.checked)}
          />
          Screen reader mode
        </label>
        {live ? (
          <button
            type="button"
            className="dash-button"
            onClick={() => {
              connection.current?.close();
            }}
          >
            Hang up
          </button>
        ) : (
          <button
            type="button"
            className="dash-button"
            onClick={() => setSession((count) => count + 1)}
          >
            New shell
          </button>
        )}
      </div>
      <div ref={host} className="sbx-terminal" />
      <p id={hintId} className="dash-muted sbx-hint">
        Keys go to the shell, Tab too: press Escape, then Tab, to move on from the terminal.
      </p>
    </div>
  );
}
