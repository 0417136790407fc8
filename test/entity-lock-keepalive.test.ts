// The entity lock is kept alive while its holder runs (kernel/lock.ts keepAlive, kernel/entity.ts withLock):
// a step slower than ENTITY_LOCK_MS (a PAC or a rail that takes its time) no longer lets a second holder
// in, while a holder that stops extending (dead, or a plain acquire) still loses it after the TTL.
import t from 'tap';
import { EntityLocks } from '../kernel/lock.js';
import type { EntityActor } from '../kernel/entity.js';
import { startTestApp, type TestApp } from './helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let a: TestApp;
t.before(async () => {
  a = await startTestApp({ ENTITY_LOCK_MS: '3000' });
});
t.teardown(() => a.stop());

t.test('a holder slower than the TTL keeps its lock; it is free once released', async (t) => {
  const actor: EntityActor = a.app.deps.runtime.actor; // the one entity actor every capability commits through
  const other = new EntityLocks(a.app.deps.redis, a.config.redisPrefix);
  const id = crypto.randomUUID();
  let during: string | null = 'not tried';
  await actor.withLock({ kind: 'lock_probe', busy: 'invoice.concurrent_modification' }, id, 0, async () => {
    await sleep(4_200); // past the 3 s TTL
    during = await other.acquire(`lock_probe:${id}`, 3_000, 0);
  });
  t.equal(during, null, 'nobody else got the lock 4.2 s into a 3 s TTL');
  const after = await other.acquire(`lock_probe:${id}`, 3_000, 0);
  t.ok(after, 'free once released');
  await other.release(`lock_probe:${id}`, after!);
});

t.test('a lock nobody keeps alive (a dead holder) expires after its TTL', async (t) => {
  const locks = new EntityLocks(a.app.deps.redis, a.config.redisPrefix);
  const id = crypto.randomUUID();
  t.ok(await locks.acquire(`lock_probe:${id}`, 1_000, 0), 'held, never released');
  t.equal(await locks.acquire(`lock_probe:${id}`, 1_000, 0), null, 'held');
  await sleep(1_300);
  const next = await locks.acquire(`lock_probe:${id}`, 1_000, 0);
  t.ok(next, 'taken after the TTL');
  await locks.release(`lock_probe:${id}`, next!);
});

t.test('one TTL per EntityLocks: another one is refused rather than extended to the first', async (t) => {
  const locks = new EntityLocks(a.app.deps.redis, a.config.redisPrefix);
  locks.keepAlive('lock_probe:ttl', 'token-1', 3_000);
  t.throws(() => locks.keepAlive('lock_probe:ttl2', 'token-2', 5_000), /keeps locks of 3000 ms alive, not 5000 ms/);
  locks.forget('lock_probe:ttl', 'token-1');
});

t.test('a kept-alive lock taken from its holder is counted lost and no longer extended', async (t) => {
  const lost: string[] = [];
  const count = { inc: (l: { entity: string }) => void lost.push(l.entity) };
  const locks = new EntityLocks(a.app.deps.redis, a.config.redisPrefix, { lockWaits: count, lockTimeouts: count, lockLost: count });
  const id = crypto.randomUUID();
  const token = (await locks.acquire(`lock_probe:${id}`, 3_000, 0))!;
  locks.keepAlive(`lock_probe:${id}`, token, 3_000);
  // Another holder's token in its place (what an expiry through a stall, then a second acquire, leaves).
  await a.app.deps.redis.set(`${a.config.redisPrefix}:lock:lock_probe:${id}`, 'someone-else', 'PX', 3_000);
  await sleep(1_300); // a beat (every 1 s for a 3 s TTL)
  t.same(lost, ['lock_probe'], 'counted once, by entity kind');
  t.equal(await a.app.deps.redis.get(`${a.config.redisPrefix}:lock:lock_probe:${id}`), 'someone-else', "the other holder's lock is untouched");
  await sleep(1_100);
  t.same(lost, ['lock_probe'], 'forgotten: not counted again');
  locks.forget(`lock_probe:${id}`, token);
});
