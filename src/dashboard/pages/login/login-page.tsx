// Signing in: by the one-time link `cairn dev` and `cairn open` print (the service sets the
// cookie and sends the browser here only when the link did not work), or with the project's API
// key, exchanged once for the same HttpOnly session cookie. The key is never stored here.

import { type FormEvent, useId, useState } from "react";
import { useSearch } from "wouter";
import { CairnRequestError } from "../../api/client.js";
import { type DashboardSession, signInWithKey } from "../../api/session.js";

const linkErrors: Record<string, string> = {
  code_used:
    "That sign-in link was used already: each link signs in once. Run `cairn open` for a new one.",
  code_expired:
    "That sign-in link has expired (links last 10 minutes). Run `cairn open` for a new one.",
  code_invalid: "That sign-in link is not valid. Run `cairn open` for a new one.",
  signed_out: "You are signed out.",
};

export function LoginPage(props: { onSignedIn: (session: DashboardSession) => void }) {
  const search = new URLSearchParams(useSearch());
  const linkError = linkErrors[search.get("error") ?? ""];
  const [apiKey, setApiKey] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const keyId = useId();
  const errorId = useId();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (apiKey.trim() === "") {
      setError("Enter the project's API key.");
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const session = await signInWithKey(apiKey.trim());
      setApiKey("");
      props.onSignedIn(session);
    } catch (caught) {
      setError(
        caught instanceof CairnRequestError && caught.status === 401
          ? "That API key is not valid for this service."
          : caught instanceof Error
            ? caught.message
            : "Signing in failed.",
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="dash-login" id="main">
      <h1>Sign in to Cairn</h1>
      {linkError === undefined ? null : (
        <p className="dash-error" role="alert">
          {linkError}
        </p>
      )}
      <p className="dash-muted">
        Open the sign-in link that <code>cairn dev</code> printed, or run <code>cairn open</code>{" "}
        for a new one. Or sign in with the project's API key: it is exchanged once for a session and
        never stored in this browser.
      </p>
      <form onSubmit={submit} noValidate>
        <label htmlFor={keyId}>API key</label>
        <input
          id={keyId}
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={apiKey}
          aria-invalid={error === undefined ? undefined : true}
          aria-describedby={error === undefined ? undefined : errorId}
          onChange={(event) => setApiKey(event.currentTarget.value)}
        />
        {error === undefined ? null : (
          <p id={errorId} className="dash-field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="dash-button dash-primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
