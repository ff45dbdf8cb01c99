// The PostgreSQL engine's records of projects, versions, scores, test runs and dashboard
// sessions, one file each; postgres-store.ts assembles them from here.
export { postgresDashboardSessions } from "./dashboard-session-repository.js";
export { postgresEvals } from "./eval-repository.js";
export { postgresProjects } from "./project-repository.js";
export { postgresScores } from "./score-repository.js";
export { postgresVersions } from "./version-repository.js";
