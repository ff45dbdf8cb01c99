/**
 * Why a process could not start in a sandbox (driver.ts): its program is missing (`errno` 2,
 * ENOENT; the message then says `cannot run <program>: …`), it may not run, or the sandbox is
 * gone. `errno` is 0 when there is none to give.
 */
export class ProcessStartError extends Error {
  constructor(
    message: string,
    readonly errno: number,
  ) {
    super(message);
    this.name = "ProcessStartError";
  }
}
