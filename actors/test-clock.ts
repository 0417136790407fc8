// The tenant's test clock (decisions.md §4): test mode only; advancing it makes every time-based
// rule of the tenant's test resources see the new time, and fires what became due at once.
import type { AppDeps } from '../api/deps.js';
import { ApiError } from '../api/errors.js';
import type { Principal } from '../api/route.js';
import type { ClockAdvanceBody } from '../schemas/payment-intents.js';
import { clockOffsetMs, tenantNow } from './clock.js';
import { PI_QUEUE } from './payment-intents.js';

function assertTestMode(p: Principal) {
  if (p.livemode) throw new ApiError('test_clock.unauthorized', 'The test clock exists only in test mode: use an sk_test_ key.');
}

export async function getClock(deps: Pick<AppDeps, 'sql'>, p: Principal) {
  assertTestMode(p);
  const now = tenantNow(await clockOffsetMs(deps.sql, p.tenantId, false), false);
  return { object: 'test_clock' as const, now: now.toISOString(), livemode: false as const };
}

export async function advanceClock(deps: Pick<AppDeps, 'sql' | 'queues' | 'log' | 'webhooks'>, p: Principal, body: ClockAdvanceBody) {
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
  const [row] = await deps.sql`
    insert into test_clocks (tenant_id, offset_ms) values (${p.tenantId}, ${offset + delta})
    on conflict (tenant_id) do update set offset_ms = test_clocks.offset_ms + ${delta}, updated_at = now()
    returning offset_ms`;
  const newNow = tenantNow(Number(row.offset_ms), false);
  // Fire what is now due for this tenant (the workers' sweeper would too, within its interval).
  const due = await deps.sql`
    select id, entity_id from timers
     where tenant_id = ${p.tenantId} and not livemode and fired_at is null and due_at <= ${newNow}`;
  for (const t of due) {
    await deps.queues
      .add(PI_QUEUE, t.entity_id as string, 'timer.fire', { intentId: t.entity_id, timerId: t.id }, { jobId: `timer-${t.id}-advance-${Number(row.offset_ms)}` })
      .catch((e) => deps.log.warn('enqueue of a due timer failed; the sweeper will fire it', { err: e }));
  }
  // Webhook retries wait on the tenant's clock too: workers claim what is now due (a wake-up over Redis
  // pub/sub from an API process; claimed here directly when this process runs the dispatcher).
  await deps.webhooks.sweepOnce({ tenantId: p.tenantId }).catch((e) => deps.log.warn('webhook sweep after a clock advance failed', { err: e }));
  return { object: 'test_clock' as const, now: newNow.toISOString(), livemode: false as const };
}
