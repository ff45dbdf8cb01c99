import { agentSession, ConfigurationError, observe, Session, withSession } from "cairn-ai";
import { describe, expect, it } from "vitest";
import { useMemoryExporter } from "../helpers/tracing.js";

describe("sessions", () => {
  const memory = useMemoryExporter();
  const agent = observe(
    async function agent(question: string) {
      await tool(question);
      return "done";
    },
    { kind: "agent" },
  );
  const tool = observe(
    async function tool(_input: string) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    },
    { kind: "tool", tags: ["io"] },
  );

  it("gives a session an id, and String(session) is that id", () => {
    const session = agentSession();
    expect(session).toBeInstanceOf(Session);
    expect(session.id).toMatch(/^ses_[0-9a-f]{24}$/);
    expect(String(session)).toBe(session.id);
    expect(`${agentSession({ id: "conv-1" })}`).toBe("conv-1");
  });

  it("puts the session id and tags on every span of the session, not only the root", async () => {
    const session = agentSession({ tags: ["support", "tier=gold"] });
    await expect(session.run(() => agent("hi"))).resolves.toBe("done");
    const spans = memory.exporter.spans();
    expect(spans.map((span) => span.name).sort()).toEqual(["agent", "tool"]);
    for (const span of spans) {
      expect(span.session_id).toBe(session.id);
      expect(span.tags).toEqual(expect.arrayContaining(["support", "tier=gold"]));
    }
    expect(spans.find((span) => span.name === "tool")?.tags).toEqual([
      "support",
      "tier=gold",
      "io",
    ]);
  });

  it("takes the session from the sessionId option and from withSession()", async () => {
    await observe(agent, { sessionId: "from-option", spanName: "outer" })("q");
    await withSession("from-helper", () => agent("q"));
    const sessionsByName = memory.exporter.spans().map((span) => [span.name, span.session_id]);
    expect(sessionsByName).toEqual([
      ["tool", "from-option"],
      ["agent", "from-option"],
      ["outer", "from-option"],
      ["tool", "from-helper"],
      ["agent", "from-helper"],
    ]);
  });

  it("records addEvent on the current span of the session, or as a span of its own", async () => {
    const session = agentSession({ id: "conv-9" });
    session.addEvent("user-message", { length: 12 });
    await session.run(() =>
      observe(
        async () => {
          session.addEvent("handoff", { to: "human" });
        },
        { spanName: "turn" },
      )(),
    );
    const [standalone, turn] = memory.exporter.spans();
    expect(standalone).toMatchObject({ name: "user-message", session_id: "conv-9" });
    expect(standalone?.attributes["cairn.session.event"]).toBe(true);
    expect(standalone?.events[0]).toMatchObject({
      name: "user-message",
      attributes: { length: 12 },
    });
    expect(turn?.events).toEqual([
      {
        name: "handoff",
        time: expect.any(String),
        attributes: { to: "human", "session.id": "conv-9" },
      },
    ]);
  });

  it("rejects unknown session options", () => {
    expect(() => agentSession({ user: "u1" } as never)).toThrow(ConfigurationError);
    expect(() => agentSession({ user: "u1" } as never)).toThrow(/option "user" is not supported/);
  });
});
