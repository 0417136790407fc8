// The JSON-over-HTTPS call every card adapter makes: a deadline, no redirects. No answer (network
// error, timeout) is a fault (the outcome is unknown); every status comes back with its body (parsed
// when it is JSON) for the adapter to read (a 5xx is a fault unless the provider documents it).
import { OutcomeUnknown } from '../../kernel/outbound.js';

export interface JsonAnswer {
  status: number;
  json: unknown;
  text: string;
}

export interface HttpOptions {
  baseUrl: string;
  /** Per-call deadline; a late answer is a fault (outcome unknown). */
  timeoutMs: number;
}

export async function callJson(o: HttpOptions, method: 'GET' | 'POST' | 'PUT', path: string, headers: Record<string, string>, body?: unknown): Promise<JsonAnswer> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(o.baseUrl + path, {
      method,
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(o.timeoutMs),
    });
    text = await res.text();
  } catch (e) {
    throw new OutcomeUnknown('unreachable', `${method} ${path}: no answer (${(e as Error).name === 'TimeoutError' ? `timeout after ${o.timeoutMs} ms` : (e as Error).message})`);
  }
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

/** A 5xx: the provider failed; whether it charged is unknown. */
export function faultIf5xx(a: JsonAnswer, what: string): void {
  if (a.status >= 500) throw new OutcomeUnknown('provider_error', `${what}: HTTP ${a.status}`);
}

/** A malformed answer (not the documented shape): the outcome is unknown. */
export function malformed(what: string): never {
  throw new OutcomeUnknown('bad_response', `malformed answer: ${what}`);
}

export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where an adapter keeps the provider's id of each of our idempotency keys (table connector_refs). */
export interface KeyBook {
  get(connectorKey: string, idempotencyKey: string): Promise<string | null>;
  put(connectorKey: string, idempotencyKey: string, providerId: string, tenantId: string, livemode: boolean): Promise<void>;
}

export class MemoryKeyBook implements KeyBook {
  readonly m = new Map<string, string>();
  async get(c: string, k: string) {
    return this.m.get(`${c}:${k}`) ?? null;
  }
  async put(c: string, k: string, id: string) {
    this.m.set(`${c}:${k}`, id);
  }
}

/** A tenant's credentials for a connector, in clear, in memory only; null when it has none. */
export type CredentialsFor = (tenantId: string, livemode: boolean) => Promise<Record<string, string> | null>;
