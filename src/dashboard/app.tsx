// The dashboard: the session first (the sign-in page without one), then the shell with each
// section's pages, each loaded on demand so the first page costs only its own code.

import {
  QueryCache,
  QueryClient,
  QueryClientProvider,
  useQuery,
  useQueryClient,
} from "@tanstack/react-query";
import { lazy, Suspense, useState } from "react";
import { Redirect, Route, Switch, useLocation } from "wouter";
import { isSignedOut } from "./api/client.js";
import { type DashboardSession, fetchSession, SessionContext, signOut } from "./api/session.js";
import { LoginPage } from "./pages/login/login-page.js";
import { Shell, sections } from "./shell/shell.js";
import { EmptyState, ErrorNotice, Loading, PageHeader } from "./ui/page.js";

const TracesPage = lazy(() => import("./pages/traces/index.js"));
const TracePage = lazy(() => import("./pages/trace/index.js"));
const SessionsPage = lazy(() => import("./pages/sessions/index.js"));
const SessionPage = lazy(() => import("./pages/session/index.js"));
const EvaluationsPage = lazy(() => import("./pages/evaluations/index.js"));
const VersionsPage = lazy(() => import("./pages/versions/index.js"));
const AnalyticsPage = lazy(() => import("./pages/analytics/index.js"));
const SandboxesPage = lazy(() => import("./pages/sandboxes/index.js"));
const SandboxPage = lazy(() => import("./pages/sandbox/index.js"));

const sessionKey = ["session"] as const;

export function createQueryClient(): QueryClient {
  const client: QueryClient = new QueryClient({
    // A request refused for want of a session (it expired, or was revoked elsewhere) sends the
    // reader back to the sign-in page.
    queryCache: new QueryCache({
      onError: (error, query) => {
        if (isSignedOut(error) && query.queryKey[0] !== sessionKey[0]) {
          void client.invalidateQueries({ queryKey: sessionKey });
        }
      },
    }),
    defaultOptions: {
      queries: {
        retry: (count, error) => !isSignedOut(error) && count < 2,
        staleTime: 5_000,
        refetchOnWindowFocus: false,
      },
    },
  });
  return client;
}

export function App(props: { client?: QueryClient }) {
  const [client] = useState(() => props.client ?? createQueryClient());
  return (
    <QueryClientProvider client={client}>
      <SignedIn />
    </QueryClientProvider>
  );
}

function SignedIn() {
  const [, navigate] = useLocation();
  const client = useQueryClient();
  const session = useQuery({
    queryKey: sessionKey,
    queryFn: ({ signal }) => fetchSession(signal),
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
  });
  if (session.isPending) return <Loading label="Signing in…" />;
  if (session.isError && !isSignedOut(session.error)) {
    return (
      <main id="main" className="dash-login">
        <ErrorNotice error={session.error} retry={() => void session.refetch()} />
      </main>
    );
  }
  const signedIn = session.isError ? undefined : session.data;
  if (signedIn === undefined) {
    return (
      <LoginPage
        onSignedIn={(next: DashboardSession) => {
          client.setQueryData(sessionKey, next);
          navigate("/traces", { replace: true });
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={signedIn}>
      <Shell
        onSignOut={() => {
          void signOut().finally(() => {
            // Nothing of the project stays in memory once signed out.
            client.clear();
            navigate("/login?error=signed_out", { replace: true });
          });
        }}
      >
        <Suspense fallback={<SectionLoading />}>
          <Switch>
            <Route path="/">
              <Redirect to="/traces" replace />
            </Route>
            <Route path="/login">
              <Redirect to="/traces" replace />
            </Route>
            <Route path="/traces" component={TracesPage} />
            <Route path="/traces/:traceId" component={TracePage} />
            <Route path="/sessions" component={SessionsPage} />
            <Route path="/sessions/:sessionId" component={SessionPage} />
            <Route path="/evaluations" component={EvaluationsPage} nest />
            <Route path="/versions" component={VersionsPage} />
            <Route path="/analytics" component={AnalyticsPage} />
            <Route path="/sandboxes" component={SandboxesPage} />
            <Route path="/sandboxes/:sandboxId" component={SandboxPage} />
            <Route>
              <EmptyState title="No such page">
                This address is not a page of the dashboard. Choose a section on the left.
              </EmptyState>
            </Route>
          </Switch>
        </Suspense>
      </Shell>
    </SessionContext.Provider>
  );
}

/**
 * What shows while a page's code loads: its section's name as the page's heading, so that the
 * page always has one (a screen reader's first landmark), then "Loading…".
 */
function SectionLoading() {
  const [location] = useLocation();
  const section = sections.find(
    (each) => location === each.path || location.startsWith(`${each.path}/`),
  );
  return (
    <>
      <PageHeader title={section?.label ?? "Cairn"} />
      <Loading />
    </>
  );
}
