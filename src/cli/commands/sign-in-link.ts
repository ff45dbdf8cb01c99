import type { ServiceConnection } from "../../core/config.js";
import { requestJson } from "../../core/http/request.js";
import { type LoginCode, loginCodeSchema } from "../../core/wire/dashboard-session.js";

/** A fresh one-time sign-in link to the dashboard of the key's project (one use, 10 minutes). */
export function signInLink(connection: ServiceConnection): Promise<LoginCode> {
  return requestJson(connection, {
    method: "POST",
    path: "/auth/login-codes",
    schema: loginCodeSchema,
    timeoutMs: 10_000,
  });
}
