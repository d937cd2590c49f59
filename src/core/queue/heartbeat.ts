/**
 * Runs `renew` every `everyMs` until the returned stop function is called. A failed renewal is
 * ignored: the lease then simply expires, and the job is recovered as if its worker had died.
 */
export function startHeartbeat(renew: () => Promise<unknown>, everyMs: number): () => void {
  const timer = setInterval(() => void renew().catch(() => undefined), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
