import { describe, expect, it } from "vitest";
import { ApiRequestError } from "../../../core/errors/api-request-error.js";
import { inCommandTerms } from "./command-hints.js";
import { exitCodeOf } from "./exit-codes.js";

describe("inCommandTerms", () => {
  const taken = new ApiRequestError("conflict", "… PATCH /v1/agents/{id}", 409);

  it("says the hint of the error's code, keeping its code, status and exit code", async () => {
    const said = await inCommandTerms(taken, { conflict: () => "use `cairn agent rm x`" });
    expect(said).toMatchObject({
      code: "conflict",
      status: 409,
      message: "use `cairn agent rm x`",
    });
    expect((said as Error).cause).toBe(taken);
    expect(exitCodeOf(said)).toBe(exitCodeOf(taken));
  });

  it("leaves alone other codes, other errors, and an error whose hint fails", async () => {
    expect(await inCommandTerms(taken, { not_found: () => "no" })).toBe(taken);
    const plain = new Error("conflict");
    expect(await inCommandTerms(plain, { conflict: () => "no" })).toBe(plain);
    const failing = async () => {
      throw new Error("the service went away");
    };
    expect(await inCommandTerms(taken, { conflict: failing })).toBe(taken);
  });
});
