import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { delimiter, join } from "node:path";

/** The first executable `name` in the folders of `searchPath` (":"-separated), if any. */
export async function findExecutable(
  name: string,
  searchPath: string,
): Promise<string | undefined> {
  for (const directory of searchPath.split(delimiter)) {
    if (directory === "") continue;
    const path = join(directory, name);
    try {
      await access(path, constants.X_OK);
      return path;
    } catch {}
  }
  return undefined;
}
