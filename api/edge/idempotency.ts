// The idempotency step (spec: Idempotency): replay a stored answer, or run the handler under the
// key's lock; a concurrent twin that committed first is answered with its response. The store (the
// record in Postgres, the lock in Redis) is api/idempotency.ts.
import type { IdempotencyHandle } from '../../kernel/idempotency.js';
import { ApiError } from '../../kernel/errors.js';
import { isIdempotencyConflict } from '../idempotency.js';
import type { Reply, RequestContext } from '../route.js';
import type { EdgeDeps } from './deps.js';
import type { Compiled } from './route-table.js';

/** The request as the idempotency step sees it: the handler's context, whose `idem` it sets. */
export interface IdempotentRequest extends Omit<RequestContext, 'idem'> {
  readonly c: Compiled;
  idem?: IdempotencyHandle;
}

export async function runIdempotent(x: IdempotentRequest, deps: EdgeDeps, key: string, hashBody: unknown): Promise<Reply> {
  const principal = x.principal;
  const begun = await deps.idempotency.begin(principal, key, x.method, x.path, hashBody, x.requestId, x.c.def.idempotencyLookup !== 'at_commit');
  if ('replay' in begun) {
    deps.metrics.idempotentReplays.inc();
    return begun.replay;
  }
  x.idem = begun.handle;
  let answered = false;
  try {
    const reply = await x.c.def.handler(x);
    // The handler answered after its commit: a record it wrote is in Postgres (see Begin.release).
    answered = reply.status < 400;
    return reply;
  } catch (e) {
    // A concurrent twin with the same key committed first: our effect rolled back; replay theirs.
    // (With idempotencyLookup 'at_commit' this is also how any repeat of the key is answered.)
    // With 'at_commit', a repeat the handler refused before its commit (a check of stored state
    // that changed since the first request: credentials removed, a customer deleted) is answered
    // with the stored response too, as a lookup first would have; a first request's refusal finds
    // none and stands. Refusals only: they are rare, so the lookup costs nothing on the hot path.
    if (isIdempotencyConflict(e) || (x.c.def.idempotencyLookup === 'at_commit' && e instanceof ApiError)) {
      const stored = await deps.idempotency.lookup(principal, begun.handle.key, begun.handle.requestHash);
      if (stored) {
        deps.metrics.idempotentReplays.inc();
        return stored;
      }
    }
    throw e;
  } finally {
    await begun.release(answered).catch((e) => deps.log.warn('idempotency lock release failed', { requestId: x.requestId, err: e }));
  }
}
