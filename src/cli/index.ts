#!/usr/bin/env node
// The `cairn` command. Only the declarations of the commands load at startup; each command's
// module is imported when it runs (see program/).
import { main } from "./program/index.js";

// A reader that goes away (`cairn … | head`) makes the next write fail with EPIPE, which Node
// raises as an unhandled error with a stack. Stop as a process killed by SIGPIPE does, quietly,
// with 128 + 13.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(141);
});

process.exitCode = await main(process.argv.slice(2));
