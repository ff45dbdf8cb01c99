// Chat messages as a conversation: each with its role in words (never by colour alone), its
// text as written (never as HTML), the tools an assistant called, and JSON as code.

import type { ChatMessage } from "./messages.js";
import "./chat-messages.css";

const roleNames: Record<string, string> = {
  user: "User",
  human: "User",
  assistant: "Assistant",
  ai: "Assistant",
  model: "Assistant",
  system: "System",
  developer: "Developer",
  tool: "Tool",
  function: "Tool",
};

/** "User", "Assistant", "Tool search" …: the role as a reader says it. */
export function roleName(message: ChatMessage): string {
  const known = roleNames[message.role.toLowerCase()];
  const name = known ?? message.role;
  return message.name !== undefined && (known === "Tool" || known === undefined)
    ? `${name} ${message.name}`
    : name;
}

export function ChatMessages(props: { messages: readonly ChatMessage[]; label?: string }) {
  return (
    <ol className="dash-chat" aria-label={props.label}>
      {props.messages.map((message, index) => (
        <li
          // The list is the message history as recorded: it never reorders.
          // biome-ignore lint/suspicious/noArrayIndexKey: messages have no id of their own
          key={index}
          className="dash-chat-message"
          data-role={roleNames[message.role.toLowerCase()]?.toLowerCase() ?? "other"}
        >
          <span className="dash-chat-role">{roleName(message)}</span>
          {message.content === null ? null : message.json === true ? (
            <pre className="dash-chat-text dash-chat-json">{message.content}</pre>
          ) : (
            <div className="dash-chat-text">{message.content}</div>
          )}
          {message.toolCalls === undefined ? null : (
            <ul className="dash-chat-calls">
              {message.toolCalls.map((call, callIndex) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a call may lack an id
                <li key={callIndex}>
                  Calls <code>{call.name}</code>
                  {call.arguments === "" ? null : <code> {call.arguments}</code>}
                </li>
              ))}
            </ul>
          )}
        </li>
      ))}
    </ol>
  );
}
