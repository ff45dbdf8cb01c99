import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyAgentCore, coreCopyPrefix, coreFileName } from "./core-copy.js";

let root = "";
let parent = "";
let source = "";

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "cairn-core-copy-test-"));
  chmodSync(root, 0o755);
  parent = join(root, "tmp");
  mkdirSync(parent, { mode: 0o1777 });
  chmodSync(parent, 0o1777);
  // The installed core, in a folder that others cannot pass through.
  source = join(root, "home", "project", "core.mjs");
  mkdirSync(dirname(source), { recursive: true });
  chmodSync(join(root, "home"), 0o700);
  writeFileSync(source, "// the agent core\n");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const modeOf = (path: string) => statSync(path).mode & 0o7777;

describe("copyAgentCore", () => {
  it("copies the core as agent-core.mjs into a read-only folder of its own", () => {
    const copy = copyAgentCore(source, parent);
    expect(dirname(copy.folder)).toBe(parent);
    expect(copy.folder.startsWith(join(parent, coreCopyPrefix))).toBe(true);
    expect(readdirSync(copy.folder)).toEqual([coreFileName]);
    expect(readFileSync(join(copy.folder, coreFileName), "utf8")).toBe("// the agent core\n");
    expect(modeOf(copy.folder)).toBe(0o555);
    expect(modeOf(join(copy.folder, coreFileName))).toBe(0o444);
    const owner = process.getuid?.();
    if (owner !== undefined) expect(statSync(copy.folder).uid).toBe(owner);
    copy.remove();
  });

  it("makes a new folder each time", () => {
    const first = copyAgentCore(source, parent);
    const second = copyAgentCore(source, parent);
    expect(second.folder).not.toBe(first.folder);
    first.remove();
    second.remove();
  });

  it("cannot be changed, replaced or moved by another local user", (context) => {
    if (process.getuid?.() !== 0) context.skip("acting as another user needs root");
    const copy = copyAgentCore(source, parent);
    const file = join(copy.folder, coreFileName);
    const asNobody = (script: string) =>
      spawnSync(
        "setpriv",
        ["--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", script],
        {
          encoding: "utf8",
        },
      );
    // The sandbox's uid is in no group, as nobody here: it reads the copy.
    expect(asNobody(`cat ${file}`).stdout).toBe("// the agent core\n");
    // Attacks: write into the file, add a file, replace the file, move the folder away.
    expect(asNobody(`echo 'process.exit(7)' > ${file}`).status).not.toBe(0);
    expect(asNobody(`echo x > ${copy.folder}/other.mjs`).status).not.toBe(0);
    expect(asNobody(`cp /dev/null /tmp/.x$$ && mv -f /tmp/.x$$ ${file}`).status).not.toBe(0);
    expect(asNobody(`mv ${copy.folder} ${copy.folder}-moved`).status).not.toBe(0);
    expect(readdirSync(copy.folder)).toEqual([coreFileName]);
    expect(readFileSync(file, "utf8")).toBe("// the agent core\n");
    expect(readdirSync(parent)).toEqual([copy.folder.slice(parent.length + 1)]);
    copy.remove();
  });

  it("keeps what it copied when the installed core changes afterwards", () => {
    const copy = copyAgentCore(source, parent);
    // Attack: the file the service was started with is replaced while it runs.
    writeFileSync(source, "process.exit(7)\n");
    expect(readFileSync(join(copy.folder, coreFileName), "utf8")).toBe("// the agent core\n");
    copy.remove();
  });

  it("removes its folder, and a second remove does nothing", () => {
    const copy = copyAgentCore(source, parent);
    copy.remove();
    expect(existsSync(copy.folder)).toBe(false);
    copy.remove();
    expect(readdirSync(parent)).toEqual([]);
  });

  it("says what is wrong when the core is missing, and leaves no folder", () => {
    expect(() => copyAgentCore(join(root, "missing.mjs"), parent)).toThrow(
      /the agent core \S*missing\.mjs cannot be copied for sandboxes to mount \(ENOENT\).*npm run build/,
    );
    expect(readdirSync(parent)).toEqual([]);
  });

  it("says where it could not make its folder", () => {
    expect(() => copyAgentCore(source, join(root, "no-such-folder"))).toThrow(
      /no folder could be made in \S*no-such-folder \(ENOENT\); set TMPDIR/,
    );
  });
});
