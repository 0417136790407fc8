// WHAT-IF experiment, not the product: preloaded with
//   NODE_OPTIONS=--import=<root>/dist/bench/webhooks-whatif-no-autopipelining.js node dist/bench/<bench>.js …
// it makes the ioredis connections that actors/worker.ts (BullMQ workers) and actors/queues.ts
// (Queue.add) duplicate with `maxRetriesPerRequest: null` skip enableAutoPipelining, which they
// inherit from the app's main connection (ops/app.ts createRedis). With auto-pipelining, ioredis
// builds a Pipeline per tick and its constructor copies every defined script (BullMQ defines dozens,
// each with a Buffer twin) onto it: ioredis/built/Pipeline.js:39 in the profiles. Used to measure
// what the suggested one-line change in those files would give; the benches never load it by default.
import { Redis, type RedisOptions } from 'ioredis';

const proto = Redis.prototype as unknown as { duplicate(override?: Partial<RedisOptions>): Redis; __orqWhatIf?: boolean };
if (!proto.__orqWhatIf) {
  proto.__orqWhatIf = true;
  const original = proto.duplicate;
  proto.duplicate = function (this: Redis, override?: Partial<RedisOptions>) {
    const o = override && override.maxRetriesPerRequest === null ? { ...override, enableAutoPipelining: false } : override;
    return original.call(this, o);
  };
  if (process.argv[1] && /confirm-app\.js$/.test(process.argv[1])) process.stderr.write(`what-if: no auto-pipelining on BullMQ/queue connections (pid ${process.pid})\n`);
}
