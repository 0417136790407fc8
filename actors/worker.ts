// The worker role: BullMQ workers for the sharded entity queues (`pi-{n}`), the maintenance
// queue, and two loops that depend on Postgres only (so they survive a flushed Redis): the timer
// sweeper and the reconciler.
import { Queue, Worker, type Job } from 'bullmq';
import type { AppDeps } from '../api/deps.js';
import { ProviderUnavailable } from '../connectors/acquirer.js';
import { startHeartbeat } from '../ops/heartbeat.js';
import { nowFor, tenantNow } from './clock.js';
import { hydrate } from './payment-intent-store.js';
import { LockBusy, PI_QUEUE } from './payment-intents.js';
import { queueName } from './queues.js';
import { RELAY_BATCH, RELAY_FIRST_BATCH } from './webhook-delivery.js';
import { ATTR, extractTrace, inSpan, SpanKind, type Carrier } from '../ops/tracing.js';

export interface RunningWorkers {
  stop(): Promise<void>;
  /** Runs the sweeper and the reconciler once (tests, and after a clock advance). */
  tick(): Promise<void>;
}

export const MAINTENANCE_QUEUE = 'maintenance';

type PiJob = { intentId: string; attemptId?: string; settle?: boolean; timerId?: string; refundId?: string; paymentMethodId?: string; _trace?: Carrier };

/** A job runs in a consumer span that continues the trace of whoever enqueued it. */
let jobMetrics: Pick<AppDeps['metrics'], 'jobDuration' | 'jobWait'> | undefined;
const traced = <D extends { _trace?: Carrier }, R>(queue: string, fn: (job: Job<D>) => Promise<R>) => async (job: Job<D>) => {
  const started = Date.now();
  const base = queue.replace(/-\{\d+\}$/, '');
  jobMetrics?.jobWait.observe({ queue: base, name: job.name }, Math.max(0, started - job.timestamp - (job.delay ?? 0)) / 1000);
  let result = 'ok';
  try {
    return await inSpan(`job ${job.name}`, { [ATTR.jobName]: job.name, [ATTR.queue]: queue, [ATTR.jobId]: String(job.id) }, () => fn(job), {
      parent: extractTrace(job.data._trace),
      kind: SpanKind.CONSUMER,
    });
  } catch (e) {
    result = 'error';
    throw e;
  } finally {
    jobMetrics?.jobDuration.observe({ queue: base, name: job.name, result }, (Date.now() - started) / 1000);
  }
};

export async function startWorkers(deps: AppDeps, instanceId: string): Promise<RunningWorkers> {
  const { config, log, sql } = deps;
  jobMetrics = deps.metrics;
  const connections: Array<{ disconnect(): void }> = [];
  const conn = () => {
    // BullMQ connections without auto-pipelining (bench/RESULTS.md: +53% deliveries/s).
    const c = deps.redis.duplicate({ maxRetriesPerRequest: null, enableAutoPipelining: false });
    connections.push(c);
    return c;
  };
  const opts = { prefix: config.redisPrefix };

  const maintenance = new Queue(MAINTENANCE_QUEUE, { ...opts, connection: conn() });
  await maintenance.upsertJobScheduler('prune-idempotency', { every: 60 * 60 * 1000 }, { name: 'prune-idempotency', opts: { removeOnComplete: 10, removeOnFail: 50 } });
  const workers: Worker[] = [
    new Worker(
      MAINTENANCE_QUEUE,
      async (job: Job) => {
        if (job.name !== 'prune-idempotency') throw new Error(`unknown maintenance job ${job.name}`);
        const n = await deps.idempotency.prune(config.idempotencyRetentionHours);
        log.info('pruned idempotency records', { count: n });
        return { pruned: n };
      },
      { ...opts, connection: conn(), concurrency: 1 },
    ),
  ];

  const pi = deps.payments;
  async function processPi(job: Job<PiJob>) {
    const { intentId, attemptId } = job.data;
    if (job.name === 'refund.execute') return { refund: (await deps.refunds.execute(job.data.refundId!))?.status };
    if (job.name === 'payment_method.activate') {
      await deps.methods.activate(job.data.paymentMethodId!);
      return { activated: true };
    }
    switch (job.name) {
      case 'attempt.execute':
      case 'attempt.capture':
      case 'attempt.inbound': {
        return pi.withLock(intentId, 2000, async () => {
          const h = await hydrate(sql, intentId);
          const attempt = h?.attempts.find((a) => a.id === attemptId);
          if (!h || !attempt) return { skipped: 'unknown attempt' };
          const connector = deps.router.connector(attempt.connector_key);
          let outcome;
          const call = <T>(op: string, fn: () => Promise<T>) =>
            inSpan(`connector ${attempt.connector_key}.${op}`, { [ATTR.connector]: attempt.connector_key, [ATTR.attemptId]: attempt.id }, fn, { kind: SpanKind.CLIENT });
          if (job.name === 'attempt.execute') {
            if (attempt.status !== 'pending') return { skipped: `attempt is ${attempt.status}` };
            // Settle an unknown outcome before anything else: when this attempt may have reached
            // the provider already (a retried or stalled job, or one the reconciler re-enqueued),
            // ask first and charge only if unseen. A first run charges directly, with the same key.
            const mayHaveCalled = job.attemptsMade > 0 || (job.stalledCounter ?? 0) > 0 || job.data.settle === true;
            outcome =
              (mayHaveCalled ? await call('retrieve', () => connector.retrieve(attempt.provider_key)) : null) ??
              (await call('charge', () => connector.charge({
                idempotencyKey: attempt.provider_key,
                attemptId: attempt.id,
                tenantId: attempt.tenant_id,
                livemode: attempt.livemode,
                method: attempt.method as never,
                amountMinor: attempt.amount_minor,
                currency: attempt.currency,
                paymentToken: attempt.payment_token ?? undefined,
                now: tenantNow(h.intent.clock_offset_ms, h.intent.livemode),
              })));
          } else if (job.name === 'attempt.capture') {
            if (attempt.status !== 'authorized') return { skipped: `attempt is ${attempt.status}` };
            outcome = await call('capture', () => connector.capture(attempt.provider_key));
          } else {
            outcome = await call('retrieve', () => connector.retrieve(attempt.provider_key));
            if (!outcome) return { skipped: 'provider does not know the attempt' };
          }
          // Under the same lock nothing changed since the read above: the step reuses it.
          await pi.stepLocked(h.intent.tenant_id, h.intent.livemode, intentId, {
            kind: 'evidence',
            attemptId: attempt.id,
            outcome,
            source: job.name === 'attempt.inbound' ? 'inbound' : 'connector',
          }, h);
          return { outcome: outcome.kind };
        });
      }
      case 'attempt.void': {
        const h = await hydrate(sql, intentId);
        const attempt = h?.attempts.find((a) => a.id === attemptId);
        if (attempt) await deps.router.connector(attempt.connector_key).void(attempt.provider_key);
        return { voided: true };
      }
      case 'timer.fire': {
        const [t] = await sql`select id, tenant_id, livemode, entity_id, due_at, fired_at from timers where id = ${job.data.timerId!}`;
        if (!t || t.fired_at) return { skipped: 'fired' };
        const now = await nowFor(sql, t.tenant_id as string, t.livemode as boolean);
        if ((t.due_at as Date).getTime() > now.getTime()) return { skipped: 'not due yet by the tenant clock' }; // the sweeper fires it when due
        await pi.command(t.tenant_id as string, t.livemode as boolean, t.entity_id as string, { kind: 'expire', timerId: t.id as string }, 2000);
        return { fired: true };
      }
      default:
        throw new Error(`unknown job ${job.name}`);
    }
  }

  for (let shard = 0; shard < config.queueShards; shard++) {
    const w = new Worker<PiJob>(queueName(PI_QUEUE, shard), traced(queueName(PI_QUEUE, shard), processPi), {
      ...opts,
      connection: conn(),
      concurrency: config.workerConcurrency,
      // A job whose worker died is taken over after lockDuration; it may stall several times (kills).
      lockDuration: config.jobLockMs,
      stalledInterval: Math.max(500, Math.floor(config.jobLockMs / 2)),
      maxStalledCount: 20,
    });
    w.on('failed', (job, err) => {
      const transient = err instanceof ProviderUnavailable || err instanceof LockBusy;
      log[transient ? 'info' : 'warn']('payment job failed', { job: job?.name, jobId: job?.id, attemptsMade: job?.attemptsMade, err: transient ? err.message : err });
    });
    w.on('error', (err) => log.warn('worker error', { err }));
    workers.push(w);
  }

  // ---- webhook deliveries: claimed from Postgres with a lease, no queue (actors/webhook-delivery.ts) --
  await deps.webhooks.start(instanceId);
  let relaying = false;
  const relay = async () => {
    if (relaying) return;
    relaying = true;
    try {
      // A small first batch, so that the first deliveries of a burst start sooner; then full batches.
      for (let batch = RELAY_FIRST_BATCH; (await deps.webhooks.relayOnce(batch)) === batch; batch = RELAY_BATCH);
    } catch (e) {
      log.warn('outbox relay failed', { err: e });
    } finally {
      relaying = false;
    }
  };
  const relayTimer = setInterval(() => void relay(), config.relayIntervalMs);
  const whSweepTimer = setInterval(() => void deps.webhooks.sweepOnce().catch((e) => log.warn('webhook sweep failed', { err: e })), config.sweepIntervalMs);

  // ---- sweeper: fire timers that are due by their tenant's clock --------------------------------
  async function sweep() {
    const due = await sql`
      -- timers due by the tenant clock (test mode: real time + the tenant's offset)
      select t.id, t.entity_id from timers t
        left join test_clocks c on c.tenant_id = t.tenant_id and not t.livemode
       where t.fired_at is null and t.due_at <= now() + make_interval(secs => coalesce(c.offset_ms, 0) / 1000.0)
       order by t.due_at limit 500`;
    for (const t of due) {
      await deps.queues.add(PI_QUEUE, t.entity_id as string, 'timer.fire', { intentId: t.entity_id, timerId: t.id }, { jobId: `timer-${t.id}-sweep` });
    }
    return due.length;
  }

  // ---- reconciler: re-enqueue what Postgres shows pending (a lost job, a flushed Redis) ----------
  async function reconcile() {
    const stale = await sql`
      -- attempts waiting on the provider, untouched for a while
      select id, payment_intent_id, status, capture_requested_at from attempts
       where (status = 'pending' or (status = 'authorized' and capture_requested_at is not null))
         and updated_at < now() - interval '3 seconds'
       order by updated_at limit 1000`;
    for (const a of stale) {
      const name = a.status === 'pending' ? 'attempt.execute' : 'attempt.capture';
      // settle: this attempt may have reached the provider before its job was lost (ask first).
      await deps.queues.add(PI_QUEUE, a.payment_intent_id as string, name, { intentId: a.payment_intent_id, attemptId: a.id, settle: true }, { jobId: `${name === 'attempt.execute' ? 'exec' : 'capture'}-${a.id}` });
    }
    const refunds = await sql`
      select id, payment_intent_id from refunds where status = 'requested' and updated_at < now() - interval '3 seconds' limit 1000`;
    for (const r of refunds) {
      await deps.queues.add(PI_QUEUE, r.payment_intent_id as string, 'refund.execute', { intentId: r.payment_intent_id, refundId: r.id }, { jobId: `refund-${r.id}` });
    }
    const methods = await sql`
      select id from payment_methods where status = 'pending' and pending_token is not null and updated_at < now() - interval '3 seconds' limit 1000`;
    for (const m of methods) {
      await deps.queues.add(PI_QUEUE, m.id as string, 'payment_method.activate', { intentId: m.id, paymentMethodId: m.id }, { jobId: `pm-${m.id}` });
    }
    return stale.length + refunds.length + methods.length;
  }

  let ticking = false;
  const tick = async () => {
    if (ticking) return;
    ticking = true;
    try {
      await sweep();
      await reconcile();
      await relay();
      await deps.webhooks.sweepOnce();
    } catch (e) {
      log.warn('sweep/reconcile failed', { err: e });
    } finally {
      ticking = false;
    }
  };
  const sweepTimer = setInterval(() => void sweep().catch((e) => log.warn('sweep failed', { err: e })), config.sweepIntervalMs);
  const reconcileTimer = setInterval(() => void reconcile().catch((e) => log.warn('reconcile failed', { err: e })), config.reconcileIntervalMs);
  void tick();

  const stopBeat = startHeartbeat(deps.redis, config.redisPrefix, instanceId);
  return {
    tick,
    async stop() {
      clearInterval(sweepTimer);
      clearInterval(relayTimer);
      clearInterval(whSweepTimer);
      clearInterval(reconcileTimer);
      await stopBeat();
      await Promise.all(workers.map((w) => w.close()));
      await deps.webhooks.stop();
      await maintenance.close();
      for (const c of connections) c.disconnect();
    },
  };
}
