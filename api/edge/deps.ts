// What the edge is given (ops/app.ts builds it) and what its steps share.
import type { Logger } from '../../kernel/log.js';
import type { KeyStore } from '../auth.js';
import type { Idempotency } from '../idempotency.js';
import type { RateLimiter } from '../rate-limit.js';
import type { Services } from '../services.js';
import type { Compiled } from './route-table.js';

/** The handlers' services (RequestContext.deps) and the edge's own collaborators. */
export interface EdgeDeps extends Services {
  readonly log: Logger;
  readonly keys: KeyStore;
  readonly limiter: RateLimiter;
  readonly idempotency: Idempotency;
  /** sha256 of the operator key (from ADMIN_KEY or the stored generated one). */
  readonly adminKeyHash: string;
}

/** One edge's state, shared by its requests. */
export interface EdgeRuntime {
  readonly deps: EdgeDeps;
  /** A request is over: its metrics, the in-flight count, and a waiting close() when it was the last. */
  finish(c: Compiled, status: number, t0: number): void;
}
