// The worker role: the runtime's BullMQ workers for every capability's queues (`{<kind>-<n>}`), the
// timer sweeper and the reconciler (kernel/runtime.ts), the webhook relay and delivery dispatcher
// (actors/webhook-delivery.ts), and the heartbeat /status reads.
import type { Runtime } from '../kernel/runtime.js';
import type { AppDeps } from './deps.js';
import { startHeartbeat } from './heartbeat.js';

export interface RunningWorkers {
  stop(): Promise<void>;
  /** Fires due timers, runs the reconcilers and the relay once (tests, and after a clock advance). */
  tick(): Promise<void>;
}

export async function startWorkers(deps: AppDeps, runtime: Runtime, instanceId: string): Promise<RunningWorkers> {
  const { config, log } = deps;
  const rt = await runtime.startWorkers({
    redis: deps.redis,
    prefix: config.redisPrefix,
    concurrency: config.workerConcurrency,
    jobLockMs: config.jobLockMs,
    sweepIntervalMs: config.sweepIntervalMs,
    reconcileIntervalMs: config.reconcileIntervalMs,
    metrics: deps.metrics,
  });

  // ---- webhook deliveries: claimed from Postgres with a lease, no queue (actors/webhook-delivery.ts) --
  await deps.webhooks.start(instanceId);
  const relay = await deps.webhooks.startRelay(); // actors/webhooks/relay.ts: on wake-ups and every RELAY_INTERVAL_MS
  const whSweepTimer = setInterval(() => void deps.webhooks.sweepOnce().catch((e) => log.warn('webhook sweep failed', { err: e })), config.sweepIntervalMs);

  // One pass of each at start: events committed while no worker ran, retries that fell due meanwhile.
  void relay.now().then(() => deps.webhooks.sweepOnce()).catch((e) => log.warn('first relay/sweep failed', { err: e }));

  const stopBeat = startHeartbeat(deps.redis, config.redisPrefix, instanceId);
  return {
    async tick() {
      await rt.tick();
      await relay.now();
      await deps.webhooks.sweepOnce().catch((e) => log.warn('webhook sweep failed', { err: e }));
    },
    async stop() {
      await relay.stop();
      clearInterval(whSweepTimer);
      await stopBeat();
      await rt.stop();
      await deps.webhooks.stop();
    },
  };
}
