// JSON helpers of the edge: null stripping (spec: Global conventions) and canonical form for hashing.

/** Drops null and undefined fields, recursively. spec: "Null fields: omitted from authenticated responses". */
export function stripNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => stripNulls(v)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = stripNulls(v);
    return out as T;
  }
  return value;
}

const dropNulls = (_k: string, v: unknown) => (v === null ? undefined : v);

/**
 * The JSON of an answer body: null fields omitted (spec: Global conventions). The edge sends
 * this and the idempotency record stores this, so a replay is byte for byte the original.
 */
export function answerJson(body: unknown): string {
  // A replacer makes JSON.stringify call back into JS for every value: only pay for it when the
  // body holds a null field (or something whose JSON we cannot foresee, such as a toJSON method).
  return body !== null && !mayHoldNullField(body) ? JSON.stringify(body) : JSON.stringify(body, dropNulls);
}

/** False only when no object inside `v` has a null field (nulls inside arrays are kept anyway). */
function mayHoldNullField(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return false;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (mayHoldNullField(v[i])) return true;
    return false;
  }
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    if (x === null || mayHoldNullField(x)) return true;
  }
  return false;
}

/** JSON with object keys sorted, so that two bodies differing only in key order or spacing hash alike. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value as object).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/**
 * The data of a domain event: a resource's projection without its absent (null or undefined)
 * top-level fields, as every authenticated projection (spec: null fields are omitted), less the
 * fields named in `omit` (e.g. `livemode`, which the event carries itself). Written once here for
 * every actor's `*.eventData`.
 */
export function eventDataOf(view: Record<string, unknown>, omit: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(view)) if (v !== null && v !== undefined && !omit.includes(k)) out[k] = v;
  return out;
}
