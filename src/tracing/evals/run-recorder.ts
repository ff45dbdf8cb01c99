import type { CreateTestRunRequest, TestResult } from "../../core/wire/evals.js";
import { addTestResults, recordTestRun, startTestRun } from "../client/evals.js";

/** A result as the service takes it: whether it passed is the service's to decide. */
type SentResult = Omit<TestResult, "passed">;

/** The run as `POST /testing/runs` takes it, without its results. */
export type RunHeader = Omit<CreateTestRunRequest, "status" | "results" | "total_cases">;

/** Results sent at once when they are ready, else whatever is ready after this long. */
const batchResults = 20;
const intervalMs = 1000;
/** A request's results stay under this (the service's body limit is 10 MiB). */
const batchCharacters = 4 * 1024 * 1024;

/**
 * Records a run on the service as its cases finish: the run starts `running`, is given the
 * results done so far in the cases' order every second (or every 20), and is finished with the
 * rest; its progress shows on the service meanwhile. Each request says how many results came
 * before it, so one sent again adds nothing twice. Where the run cannot start (a service that
 * knows no running runs), it is recorded whole at the end, as before.
 */
export class RunRecorder {
  readonly #results: Array<SentResult | undefined>;
  readonly #started: Promise<void>;
  #runId: string | undefined;
  /** Results the service has. */
  #sent = 0;
  /** A request that failed: the rest waits for the end, when it is sent again. */
  #paused = false;
  #sending: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly run: RunHeader,
    total: number,
  ) {
    this.#results = new Array(total);
    this.#started = startTestRun({ ...run, total_cases: total }).then(
      (started) => {
        this.#runId = started.run_id;
      },
      () => undefined,
    );
  }

  /** Case `index` has finished. */
  done(index: number, { passed: _passed, ...result }: TestResult): void {
    this.#results[index] = result;
    if (this.#ready() >= batchResults) {
      void this.#flush();
    } else {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined;
        void this.#flush();
      }, intervalMs);
      this.#timer.unref?.();
    }
  }

  /**
   * Sends what is left and finishes the run, once every case is done: its id, or why it is not
   * recorded (or recorded only in part).
   */
  async finish(): Promise<{ runId: string | undefined; uploadError: string | undefined }> {
    clearTimeout(this.#timer);
    this.#paused = true;
    await this.#sending;
    await this.#started;
    const results = this.#results as SentResult[];
    const runId = this.#runId;
    try {
      if (runId === undefined) {
        return {
          runId: (await recordTestRun({ ...this.run, results })).run_id,
          uploadError: undefined,
        };
      }
      do {
        const count = this.#batch(results.length - this.#sent);
        const finished = this.#sent + count === results.length;
        const batch = results.slice(this.#sent, this.#sent + count);
        await addTestResults(runId, { offset: this.#sent, results: batch, finished });
        this.#sent += count;
      } while (this.#sent < results.length);
      return { runId, uploadError: undefined };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        runId: undefined,
        uploadError:
          runId === undefined
            ? reason
            : `run ${runId} has ${this.#sent} of its ${results.length} results: ${reason}`,
      };
    }
  }

  /** Results done, after those sent, with none missing before them. */
  #ready(): number {
    let end = this.#sent;
    while (end < this.#results.length && this.#results[end] !== undefined) end++;
    return end - this.#sent;
  }

  /** How many of the next `available` results go in one request. */
  #batch(available: number): number {
    let characters = 0;
    for (let count = 0; count < available; count++) {
      characters += JSON.stringify(this.#results[this.#sent + count]).length;
      if (characters > batchCharacters && count > 0) return count;
    }
    return available;
  }

  #flush(): Promise<void> {
    this.#sending ??= this.#sendReady().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  async #sendReady(): Promise<void> {
    await this.#started;
    for (;;) {
      const runId = this.#runId;
      const count = this.#batch(this.#ready());
      if (runId === undefined || this.#paused || count === 0) return;
      const batch = this.#results.slice(this.#sent, this.#sent + count) as SentResult[];
      try {
        await addTestResults(runId, { offset: this.#sent, results: batch });
        this.#sent += count;
      } catch {
        this.#paused = true;
      }
    }
  }
}
