// The retry schedule (spec: Events > Delivery and retries): the waits after each failed attempt,
// counted on the tenant's clock from the moment that attempt's answer came back, and the 72-hour
// rule that disables an endpoint whose delivery still fails that long after it was queued.

/** A delivery still failing this long after it was queued (tenant clock) disables its endpoint. */
export const DISABLE_AFTER_MS = 72 * 3600_000;
/** Waits after the 1st, 2nd, … failed attempt; from the 7th on, 24 h repeated. */
export const RETRY_WAITS_S = [60, 300, 1800, 7200, 21600, 43200];
export const retryWaitSeconds = (failures: number) => RETRY_WAITS_S[failures - 1] ?? 86400;
