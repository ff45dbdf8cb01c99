// Who is signed in: the session the cookie stands for, read from GET /auth/session.

import { createContext, useContext } from "react";
import { api, setCsrfToken } from "./client.js";

export interface DashboardSession {
  readonly project: { readonly id: string; readonly name: string };
  readonly csrfToken: string;
  readonly expiresAt: string;
}

export async function fetchSession(signal?: AbortSignal): Promise<DashboardSession> {
  const session = await api<DashboardSession>("/auth/session", { signal });
  setCsrfToken(session.csrfToken);
  return session;
}

export async function signInWithKey(apiKey: string): Promise<DashboardSession> {
  const session = await api<DashboardSession>("/auth/login", {
    method: "POST",
    body: { apiKey },
  });
  setCsrfToken(session.csrfToken);
  return session;
}

export async function signOut(): Promise<void> {
  try {
    await api("/auth/logout", { method: "POST" });
  } finally {
    setCsrfToken(undefined);
  }
}

export const SessionContext = createContext<DashboardSession | undefined>(undefined);

/** The signed-in session; only pages inside the signed-in shell call it. */
export function useSession(): DashboardSession {
  const session = useContext(SessionContext);
  if (session === undefined) throw new Error("useSession must be used within the signed-in shell");
  return session;
}
