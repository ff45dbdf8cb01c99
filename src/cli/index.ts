#!/usr/bin/env node
// The `cairn` command. Only the declarations of the commands load at startup; each command's
// module is imported when it runs (see program/).
import { main } from "./program/index.js";

process.exitCode = await main(process.argv.slice(2));
