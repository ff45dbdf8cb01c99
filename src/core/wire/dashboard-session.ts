import { z } from "zod";

/** `POST /auth/login-codes`: a one-time sign-in link to the dashboard. */
export const loginCodeSchema = z.object({
  url: z.string().describe("the link to open: <service>/login?code=…"),
  code: z.string().describe("the code alone: one use, 10 minutes"),
  expiresAt: z.string().describe("when the code stops working (ISO 8601, UTC)"),
});

/** `POST /auth/login`: the project's API key, exchanged once for a session cookie. */
export const keySignInSchema = z.strictObject({
  apiKey: z.string().min(1).max(256).describe("the project's API key"),
});

/** `POST /auth/login` and `GET /auth/session`: who the session cookie stands for. */
export const dashboardSessionSchema = z.object({
  project: z.object({ id: z.string(), name: z.string() }),
  csrfToken: z
    .string()
    .describe("send it in X-CSRF-Token with every request that is not GET, HEAD or OPTIONS"),
  expiresAt: z.string().describe("when the session ends (ISO 8601, UTC): 7 days after sign-in"),
});

export type LoginCode = z.infer<typeof loginCodeSchema>;
export type DashboardSignIn = z.infer<typeof dashboardSessionSchema>;
