import { resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { resolveDataDir } from "../server/data-directory.js";
import { environment, integerSetting, serviceConnection } from "./config.js";
import { ConfigurationError } from "./errors/index.js";

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("the environment", () => {
  it("takes an empty variable as unset, everywhere", () => {
    vi.stubEnv("CAIRN_ENDPOINT", "");
    vi.stubEnv("CAIRN_API_KEY", "");
    vi.stubEnv("CAIRN_DATA_DIR", "");
    expect(environment("endpoint")).toBeUndefined();
    expect(serviceConnection()).toBeUndefined();
    // Not the current directory: the default data directory.
    expect(resolveDataDir()).toBe(resolve(".cairn"));
    expect(serviceConnection({ endpoint: "http://127.0.0.1:7070/" })).toEqual({
      endpoint: "http://127.0.0.1:7070",
      apiKey: undefined,
    });
  });

  it("completes a connection from the variables, the given values first", () => {
    vi.stubEnv("CAIRN_ENDPOINT", "https://cairn.example.com//");
    vi.stubEnv("CAIRN_API_KEY", "cairn_from_env");
    expect(serviceConnection()).toEqual({
      endpoint: "https://cairn.example.com",
      apiKey: "cairn_from_env",
    });
    expect(serviceConnection({ apiKey: "cairn_given" })?.apiKey).toBe("cairn_given");
  });

  it("names the variable that holds a bad value", () => {
    vi.stubEnv("CAIRN_ENDPOINT", "ftp://127.0.0.1:7070");
    expect(() => serviceConnection()).toThrow(ConfigurationError);
    expect(() => serviceConnection()).toThrow(/CAIRN_ENDPOINT must be an http/);
    vi.stubEnv("CAIRN_ENDPOINT", "not a url");
    expect(() => serviceConnection()).toThrow(/CAIRN_ENDPOINT is not a URL/);
    vi.stubEnv("CAIRN_PORT", "70x");
    const port = () =>
      integerSetting("port", undefined, { min: 0, max: 65_535, fallback: 7070, option: "port" });
    expect(port).toThrow('CAIRN_PORT must be a whole number from 0 to 65535 (got "70x")');
    vi.stubEnv("CAIRN_PORT", "");
    expect(port()).toBe(7070);
  });
});
