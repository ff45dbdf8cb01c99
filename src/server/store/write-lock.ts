import { threadId } from "node:worker_threads";

/**
 * A lock shared by the threads that write to the store, through a SharedArrayBuffer. SQLite
 * allows one writer at a time and makes the others poll with growing sleeps (busy_timeout); with
 * this lock a thread that waits is woken the moment the writer before it commits. The holder's
 * thread id is kept in the lock, so a thread that dies holding it can be released by the owner of
 * the pool ({@link releaseIfHeldBy}).
 */
export class WriteLock {
  private readonly state: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.state = new Int32Array(buffer);
  }

  /** Runs `work` holding the lock; waits (blocking this thread) while another thread holds it. */
  run<R>(work: () => R): R {
    // Thread ids start at 0 (the main thread); 0 in the lock means free.
    const me = threadId + 1;
    for (;;) {
      const holder = Atomics.compareExchange(this.state, 0, 0, me);
      if (holder === 0) break;
      // The timeout only guards against a wake-up lost to a thread that died holding the lock.
      Atomics.wait(this.state, 0, holder, 1_000);
    }
    try {
      return work();
    } finally {
      Atomics.store(this.state, 0, 0);
      Atomics.notify(this.state, 0, 1);
    }
  }

  /** Frees the lock if the thread `deadThreadId` (which has exited) still holds it. */
  releaseIfHeldBy(deadThreadId: number): void {
    if (Atomics.compareExchange(this.state, 0, deadThreadId + 1, 0) === deadThreadId + 1) {
      Atomics.notify(this.state, 0, 1);
    }
  }
}
