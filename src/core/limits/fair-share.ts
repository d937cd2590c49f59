/**
 * Fair shares of one kind of expensive work in a process (compiles, Python runs): at most `total`
 * at once, and at most `perAccount` of them for one account, so one tenant's flood never takes a
 * slot another tenant asks for. Work past its account's share (or past the total) waits its turn,
 * up to `maxWaitMs`; accounts take turns as slots free (round robin), so the account with many
 * waiting does not go before the one with one. Past the wait, or with too many waiting for one
 * account, {@link FairShareBusy} says when to come back. Framework-free; in-memory, per process.
 */

export class FairShareBusy extends Error {
  constructor(
    message: string,
    /** Why: the account holds its share, or the process is full. */
    readonly scope: 'account' | 'process',
    /** A hint for `Retry-After`, seconds. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'FairShareBusy';
  }
}

export interface FairShareOptions {
  /** Names the work in messages: "compiles", "Python runs". */
  label: string;
  /** Work of this kind running at once in the process. */
  total: number;
  /** Work of one account running at once in the process. */
  perAccount: number;
  /** The longest one piece of work waits for a slot by default (0: never waits). */
  maxWaitMs: number;
  /** Work of one account that may wait at once; past it, refused at once. Default 4 × perAccount. */
  maxWaitingPerAccount?: number;
  /** The `Retry-After` hint, seconds. Default 5. */
  retryAfterSeconds?: number;
}

interface Waiter {
  account: string;
  grant: (release: () => void) => void;
  timer?: NodeJS.Timeout;
}

export interface FairShareStats {
  running: number;
  waiting: number;
  /** Running per account, for accounts with work running. */
  byAccount: Record<string, number>;
}

export class FairShare {
  private readonly running = new Map<string, number>();
  private runningTotal = 0;
  /** Waiting work per account, in arrival order; accounts in the order their turn comes. */
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly maxWaitingPerAccount: number;
  private readonly retryAfterSeconds: number;

  constructor(private readonly options: FairShareOptions) {
    for (const [name, value] of [
      ['total', options.total],
      ['perAccount', options.perAccount],
    ] as const) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
    }
    this.maxWaitingPerAccount = options.maxWaitingPerAccount ?? 4 * options.perAccount;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 5;
  }

  /**
   * A slot for `account`'s work: resolves to its release (call it once the work ended, whatever
   * the end; a second call does nothing). Rejects with {@link FairShareBusy} when no slot came
   * within `waitMs` (default `maxWaitMs`; `Infinity` waits as long as it takes).
   */
  acquire(account: number | string, options: { waitMs?: number } = {}): Promise<() => void> {
    const key = String(account);
    if (this.fits(key) && !this.waiting.has(key)) return Promise.resolve(this.take(key));
    const waitMs = options.waitMs ?? this.options.maxWaitMs;
    const queue = this.waiting.get(key) ?? [];
    if (waitMs <= 0 || queue.length >= this.maxWaitingPerAccount) return Promise.reject(this.busy(key));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { account: key, grant: resolve };
      if (Number.isFinite(waitMs)) {
        waiter.timer = setTimeout(() => {
          this.drop(waiter);
          reject(this.busy(key));
        }, waitMs);
        waiter.timer.unref?.();
      }
      queue.push(waiter);
      this.waiting.set(key, queue);
      // Another account's release may have left a slot this one can take now.
      this.serve();
    });
  }

  /** Runs `work` in a slot of `account`'s. */
  async run<T>(
    account: number | string,
    work: () => Promise<T>,
    options: { waitMs?: number } = {},
  ): Promise<T> {
    const release = await this.acquire(account, options);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Work of `account` waiting for a slot now. */
  waitingFor(account: number | string): number {
    return this.waiting.get(String(account))?.length ?? 0;
  }

  stats(): FairShareStats {
    let waiting = 0;
    for (const queue of this.waiting.values()) waiting += queue.length;
    return { running: this.runningTotal, waiting, byAccount: Object.fromEntries(this.running) };
  }

  private fits(account: string): boolean {
    return (
      this.runningTotal < this.options.total && (this.running.get(account) ?? 0) < this.options.perAccount
    );
  }

  private take(account: string): () => void {
    this.runningTotal += 1;
    this.running.set(account, (this.running.get(account) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.runningTotal -= 1;
      const left = this.running.get(account)! - 1;
      if (left === 0) this.running.delete(account);
      else this.running.set(account, left);
      this.serve();
    };
  }

  /** Grants free slots to waiting work, one account at a time, in turn. */
  private serve(): void {
    let granted = true;
    while (granted && this.runningTotal < this.options.total) {
      granted = false;
      for (const [account, queue] of this.waiting) {
        if (!this.fits(account)) continue;
        const waiter = queue.shift()!;
        clearTimeout(waiter.timer);
        // To the back of the turn order: the next slot goes to another account first.
        this.waiting.delete(account);
        if (queue.length > 0) this.waiting.set(account, queue);
        waiter.grant(this.take(account));
        granted = true;
        break;
      }
    }
  }

  private drop(waiter: Waiter): void {
    const queue = this.waiting.get(waiter.account);
    if (!queue) return;
    const i = queue.indexOf(waiter);
    if (i >= 0) queue.splice(i, 1);
    if (queue.length === 0) this.waiting.delete(waiter.account);
  }

  private busy(account: string): FairShareBusy {
    const { label, perAccount, total } = this.options;
    return (this.running.get(account) ?? 0) >= perAccount
      ? new FairShareBusy(
          `The account is running ${perAccount} ${label} at once already, its share; retry after the Retry-After delay`,
          'account',
          this.retryAfterSeconds,
        )
      : new FairShareBusy(
          `This process is running ${total} ${label} at once already; retry after the Retry-After delay`,
          'process',
          this.retryAfterSeconds,
        );
  }
}
