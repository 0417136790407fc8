// The tenant's test clock (decisions.md §4): test mode only; advancing it makes every time-based
// rule of the tenant's test resources see the new time, and fires what became due at once.
import type { Sql } from '../kernel/db.js';
import type { Logger } from '../kernel/log.js';
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import type { ClockAdvanceBody } from '../schemas/payment-intents.js';
import { advanceClockOffset, clockOffsetMs, tenantNow } from '../kernel/clock.js';

function assertTestMode(p: Principal) {
  if (p.livemode) throw new ApiError('test_clock.unauthorized', 'The test clock exists only in test mode: use an sk_test_ key.');
}

async function getClock(deps: { sql: Sql }, p: Principal) {
  assertTestMode(p);
  const now = tenantNow(await clockOffsetMs(deps.sql, p.tenantId, false), false);
  return { object: 'test_clock' as const, now: now.toISOString(), livemode: false as const };
}

export interface ClockDeps {
  sql: Sql;
  log: Logger;
  /** Fires (enqueues) the tenant's timers that are now due (kernel/timers.ts sweep). */
  sweepTimers(tenantId: string, suffix: string): Promise<number>;
  /** Claims webhook retries that are now due (they wait on the tenant's clock too). */
  webhooks: { sweepOnce(opts: { tenantId: string }): Promise<unknown> };
}

async function advanceClock(deps: ClockDeps, p: Principal, body: ClockAdvanceBody) {
  assertTestMode(p);
  const offset = await clockOffsetMs(deps.sql, p.tenantId, false);
  const now = Date.now() + offset;
  let delta: number;
  if (body.seconds !== undefined) delta = body.seconds * 1000;
  else {
    const to = Date.parse(body.to!);
    if (!(to > now)) throw new ApiError('test_clock.invalid_advance', `\`to\` must be later than the clock's now (${new Date(now).toISOString()}).`);
    delta = to - now;
  }
  const newOffset = await advanceClockOffset(deps.sql, p.tenantId, offset, delta);
  const newNow = tenantNow(newOffset, false);
  // Fire what is now due for this tenant (the workers' sweeper would too, within its interval). The
  // suffix makes a new job: the timer's own delayed job may still wait in Redis with a real-time delay.
  await deps.sweepTimers(p.tenantId, `advance-${newOffset}`).catch((e) => deps.log.warn('enqueue of due timers failed; the sweeper will fire them', { err: e }));
  // Webhook retries wait on the tenant's clock too: workers claim what is now due (a wake-up over Redis
  // pub/sub from an API process; claimed here directly when this process runs the dispatcher).
  await deps.webhooks.sweepOnce({ tenantId: p.tenantId }).catch((e) => deps.log.warn('webhook sweep after a clock advance failed', { err: e }));
  return { object: 'test_clock' as const, now: newNow.toISOString(), livemode: false as const };
}

/** The test clock of a tenant (test keys only). */
export class TestClock {
  constructor(private d: ClockDeps) {}
  get(p: Principal) {
    return getClock(this.d, p);
  }
  advance(p: Principal, body: ClockAdvanceBody) {
    return advanceClock(this.d, p, body);
  }
}
