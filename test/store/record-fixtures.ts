import type { Store } from "../../src/server/store/store.js";

/** The id of a new project in `store`, for the records of projects, versions, scores and runs. */
export async function newProjectId(store: Store): Promise<string> {
  return (await store.projects.createProject("default")).project.id;
}
