// One session as a conversation, turn by turn: what was asked and answered, each turn's latency,
// tokens and cost with a link to its trace, the session's totals, and its events in time order.
// The turns come a page at a time (100), the next read as the reader nears the end.

import { useInfiniteQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { Link, useParams } from "wouter";
import type { SessionDetail } from "../../../core/wire/sessions.js";
import { api, CairnRequestError, queryString } from "../../api/client.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "../../ui/page.js";
import { Conversation } from "./conversation.js";
import { sessionEntries } from "./entries.js";
import { SessionTotals } from "./session-totals.js";
import "./session.css";

const pageSize = 100;

export default function SessionPage() {
  const { sessionId = "" } = useParams<{ sessionId: string }>();
  const session = useInfiniteQuery({
    queryKey: ["session", sessionId],
    queryFn: ({ pageParam, signal }) =>
      api<SessionDetail>(
        `/sessions/${encodeURIComponent(sessionId)}${queryString({ limit: pageSize, cursor: pageParam })}`,
        { signal },
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    // A session the project does not have stays missing: said at once, not after retries.
    retry: (count, error) => !isMissing(error) && count < 2,
  });

  const pages = session.data?.pages;
  const first = pages?.[0];
  const entries = useMemo(() => {
    if (pages === undefined || first === undefined) return [];
    const traces = pages.flatMap((page) => page.traces);
    return sessionEntries(traces, first.events, pages[pages.length - 1]?.next_cursor === null);
  }, [pages, first]);

  const back = (
    <Link href="/sessions" className="dash-button">
      All sessions
    </Link>
  );
  if (session.isPending) {
    return (
      <>
        <PageHeader title="Session" description={<code>{sessionId}</code>} actions={back} />
        <Loading label="Loading the session…" />
      </>
    );
  }
  // A later page that failed keeps what was read: only a first page missing is the page's error.
  if (first === undefined) {
    const missing = isMissing(session.error);
    return (
      <>
        <PageHeader title="Session" description={<code>{sessionId}</code>} actions={back} />
        {missing ? (
          <EmptyState title="No such session">
            This project has no session <code>{sessionId}</code>.
          </EmptyState>
        ) : (
          <ErrorNotice error={session.error} retry={() => void session.refetch()} />
        )}
      </>
    );
  }
  return (
    <>
      <PageHeader title="Session" description={<code>{sessionId}</code>} actions={back} />
      <SessionTotals session={first} />
      <section aria-labelledby="session-conversation" className="session-conversation">
        <h2 id="session-conversation">Conversation</h2>
        {entries.length === 0 ? (
          <EmptyState title="No turns yet" />
        ) : (
          <Conversation
            entries={entries}
            hasMore={session.hasNextPage}
            loadingMore={session.isFetchingNextPage}
            loadMore={() => void session.fetchNextPage()}
          />
        )}
        {session.isFetchNextPageError ? (
          <ErrorNotice
            error={session.error}
            doing="load more turns"
            retry={() => void session.fetchNextPage()}
          />
        ) : null}
      </section>
    </>
  );
}

function isMissing(error: unknown): boolean {
  return error instanceof CairnRequestError && error.status === 404;
}
