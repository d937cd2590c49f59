import { FairShare, FairShareBusy } from '../../src/core/limits/fair-share.js';

/** Settles pending promise callbacks (grants are resolved promises). */
const flush = () => new Promise((resolve) => setImmediate(resolve));

/** Records the order in which acquisitions are granted. */
function tracker(share: FairShare) {
  const granted: string[] = [];
  const releases = new Map<string, () => void>();
  const ask = (account: string, name: string, waitMs?: number) =>
    share.acquire(account, waitMs === undefined ? {} : { waitMs }).then((release) => {
      granted.push(name);
      releases.set(name, release);
      return release;
    });
  return { granted, releases, ask };
}

describe('FairShare', () => {
  it('grants at once within the account’s share and the total', async () => {
    const share = new FairShare({ label: 'compiles', total: 3, perAccount: 2, maxWaitMs: 1_000 });
    const { granted, ask } = tracker(share);
    await Promise.all([ask('a', 'a1'), ask('a', 'a2'), ask('b', 'b1')]);
    expect(granted).toEqual(['a1', 'a2', 'b1']);
    expect(share.stats()).toEqual({ running: 3, waiting: 0, byAccount: { a: 2, b: 1 } });
  });

  it('lets another account start while one account waits past its share', async () => {
    const share = new FairShare({ label: 'compiles', total: 4, perAccount: 1, maxWaitMs: 60_000 });
    const { granted, releases, ask } = tracker(share);
    await ask('a', 'a1');
    const a2 = ask('a', 'a2');
    const a3 = ask('a', 'a3');
    await ask('b', 'b1');
    await flush();
    expect(granted).toEqual(['a1', 'b1']);
    expect(share.stats()).toMatchObject({ running: 2, waiting: 2 });
    releases.get('a1')!();
    await a2;
    expect(granted).toEqual(['a1', 'b1', 'a2']);
    releases.get('a2')!();
    await a3;
    releases.get('a3')!();
    releases.get('b1')!();
    expect(share.stats()).toEqual({ running: 0, waiting: 0, byAccount: {} });
  });

  it('serves waiting accounts in turn when the process is full, not in arrival order', async () => {
    const share = new FairShare({ label: 'runs', total: 1, perAccount: 1, maxWaitMs: 60_000 });
    const { granted, releases, ask } = tracker(share);
    await ask('x', 'x1');
    // Three of a's arrive before b's one and c's one.
    const waiting = [ask('a', 'a1'), ask('a', 'a2'), ask('a', 'a3'), ask('b', 'b1'), ask('c', 'c1')];
    let last = 'x1';
    for (let i = 0; i < waiting.length; i += 1) {
      releases.get(last)!();
      await flush();
      last = granted[granted.length - 1];
    }
    releases.get(last)!();
    await Promise.all(waiting);
    expect(granted).toEqual(['x1', 'a1', 'b1', 'c1', 'a2', 'a3']);
  });

  it('refuses past the wait with the account’s scope and a Retry-After hint, and forgets the waiter', async () => {
    const share = new FairShare({
      label: 'compiles',
      total: 4,
      perAccount: 1,
      maxWaitMs: 20,
      retryAfterSeconds: 7,
    });
    const first = await share.acquire('a');
    const refused = await share.acquire('a').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FairShareBusy);
    expect(refused).toMatchObject({ scope: 'account', retryAfterSeconds: 7 });
    expect((refused as Error).message).toMatch(/account is running 1 compiles at once already/);
    expect(share.stats()).toMatchObject({ running: 1, waiting: 0 });
    first();
    // A refused waiter is not granted the freed slot later.
    expect(share.stats()).toEqual({ running: 0, waiting: 0, byAccount: {} });
  });

  it('refuses at once with waitMs 0, naming the process when it is full', async () => {
    const share = new FairShare({ label: 'Python runs', total: 2, perAccount: 2, maxWaitMs: 0 });
    const a = await share.acquire('a');
    await share.acquire('b');
    await expect(share.acquire('c')).rejects.toMatchObject({ scope: 'process' });
    a();
    a(); // a second release changes nothing
    expect(share.stats()).toEqual({ running: 1, waiting: 0, byAccount: { b: 1 } });
    await expect(share.acquire('c')).resolves.toEqual(expect.any(Function));
  });

  it('bounds what one account may have waiting', async () => {
    const share = new FairShare({
      label: 'compiles',
      total: 8,
      perAccount: 1,
      maxWaitMs: 60_000,
      maxWaitingPerAccount: 2,
    });
    const first = await share.acquire('a');
    const waiting = [share.acquire('a'), share.acquire('a')];
    await expect(share.acquire('a')).rejects.toMatchObject({ scope: 'account' });
    // Another account is not bounded by it.
    await expect(share.acquire('b')).resolves.toEqual(expect.any(Function));
    first();
    (await waiting[0])();
    (await waiting[1])();
  });

  it('releases the slot of work that throws', async () => {
    const share = new FairShare({ label: 'compiles', total: 1, perAccount: 1, maxWaitMs: 0 });
    await expect(
      share.run('a', () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(share.run('a', () => Promise.resolve(42))).resolves.toBe(42);
  });

  it('refuses a share that is not a positive integer', () => {
    expect(() => new FairShare({ label: 'x', total: 0, perAccount: 1, maxWaitMs: 0 })).toThrow(RangeError);
    expect(() => new FairShare({ label: 'x', total: 2, perAccount: 1.5, maxWaitMs: 0 })).toThrow(RangeError);
  });
});
