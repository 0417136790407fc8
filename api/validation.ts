// Request schemas compiled once into Ajv validators; failures mapped to the spec's error codes
// through the x-error-code keywords of schemas/common.ts, with a message that names the field.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ISO_4217_SET } from '../schemas/currency.js';
import type { ErrorCode } from '../kernel/error-catalog.js';
import { ApiError } from '../kernel/errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  // strictNumbers: Infinity and NaN are not numbers (JSON.parse turns 1e400 into Infinity, and a
  // query's "1e400" coerces to it); integers are bounded by format int64 (safe integers) or a maximum.
  const ajv = new Ajv({ allErrors: false, verbose: true, strict: true, strictNumbers: true, coerceTypes, useDefaults: true, allowUnionTypes: true });
  addFormats(ajv);
  // int64 as JavaScript can hold it exactly: a safe integer (ajv-formats accepts any integer, 1e300 too).
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  for (const kw of ['x-error-code', 'x-required-error-code', 'x-error-message', 'x-required-error-message']) {
    if (!ajv.getKeyword(kw)) ajv.addKeyword({ keyword: kw, schemaType: ['string', 'array'] });
  }
  ajv.addKeyword({
    keyword: 'x-iso4217',
    type: 'string',
    schemaType: 'boolean',
    errors: false,
    validate: (on: boolean, data: string) => !on || ISO_4217_SET.has(data),
  });
  return ajv;
}

const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);

export type Validator<T = unknown> = (value: unknown) => T;

type Sch = Record<string, unknown>;

function fieldName(err: ErrorObject): string {
  const path = err.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (err.keyword === 'required') {
    const p = (err.params as { missingProperty: string }).missingProperty;
    return path ? `${path}.${p}` : p;
  }
  return path || 'body';
}

/** A number with a fraction where whole minor units go (`amount_minor: 150.50`): what to send instead. */
function fractionMessage(field: string, value: number): string {
  if (!/_minor$/.test(field)) return `\`${field}\` must be an integer; ${value} has a fraction.`;
  const cents = Math.round(value * 100);
  const hint = Number.isSafeInteger(cents) && cents > 0 ? ` For ${value.toFixed(2)} pesos send ${cents}.` : '';
  return `\`${field}\` must be an integer number of centavos (minor units); ${value} has a fraction.${hint}`;
}

function describe(err: ErrorObject, where: 'body' | 'query'): string {
  const field = fieldName(err);
  // Before the field's own message, which speaks of other mistakes (a missing or negative amount).
  if (err.keyword === 'type' && (err.params as { type?: unknown }).type === 'integer' && typeof err.data === 'number' && Number.isFinite(err.data) && !Number.isInteger(err.data)) {
    return fractionMessage(field, err.data);
  }
  const own = (err.parentSchema as Sch | undefined)?.['x-error-message'];
  if (typeof own === 'string' && err.keyword !== 'required') return own;
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required': {
      const propSchema = ((err.parentSchema as Sch | undefined)?.properties as Record<string, Sch> | undefined)?.[String(p.missingProperty)];
      const msg = propSchema?.['x-required-error-message'] ?? propSchema?.['x-error-message'];
      return typeof msg === 'string' ? msg : `\`${field}\` is required.`;
    }
    case 'additionalProperties': {
      const allowed = Object.keys(((err.parentSchema as Sch).properties as object) ?? {});
      const at = field === 'body' || field === 'query' ? '' : ` in \`${field}\``;
      return `Unknown ${where === 'query' ? 'query parameter' : 'field'} \`${String(p.additionalProperty)}\`${at}. Accepted: ${allowed.join(', ') || 'none'}.`;
    }
    case 'type':
      return `\`${field}\` must be ${/^[aeiou]/.test(String(p.type)) ? 'an' : 'a'} ${String(p.type)}${where === 'body' ? ' (JSON type)' : ''}.`;
    case 'minimum':
      return `\`${field}\` must be at least ${String(p.limit)}.`;
    case 'exclusiveMinimum':
      return `\`${field}\` must be greater than ${String(p.limit)}.`;
    case 'maximum':
      return `\`${field}\` must be at most ${String(p.limit)}.`;
    case 'minLength':
      return Number(p.limit) === 1 ? `\`${field}\` must not be empty.` : `\`${field}\` must be at least ${String(p.limit)} characters.`;
    case 'maxLength':
      return `\`${field}\` must be at most ${String(p.limit)} characters.`;
    case 'enum':
      return `\`${field}\` must be one of: ${(p.allowedValues as unknown[]).join(', ')}.`;
    case 'const':
      return `\`${field}\` must be ${JSON.stringify(p.allowedValue)}.`;
    case 'format':
      if (p.format === 'int64') return `\`${field}\` must be an integer between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}.`;
      return `\`${field}\` is not a valid ${String(p.format)}.`;
    case 'pattern':
    case 'x-iso4217':
      return `\`${field}\` has an invalid value${err.keyword === 'x-iso4217' || String(p.pattern) === '^[A-Z]{3}$' ? ': use an ISO 4217 code in upper case, such as MXN' : ''}.`;
    case 'maxProperties':
      return `\`${field}\` has too many keys (at most ${String(p.limit)}).`;
    case 'minItems':
      return `\`${field}\` needs at least ${String(p.limit)} item(s).`;
    case 'uniqueItems':
      return `\`${field}\` must not repeat items.`;
    default:
      return `\`${field}\` ${err.message ?? 'is invalid'}.`;
  }
}

function codeFor(err: ErrorObject, fallback: ErrorCode, root: Sch): ErrorCode {
  const parent = err.parentSchema as Sch | undefined;
  if (err.keyword === 'required') {
    const prop = ((parent?.properties as Record<string, Sch> | undefined) ?? {})[String((err.params as { missingProperty: string }).missingProperty)];
    const c = prop?.['x-required-error-code'] ?? prop?.['x-error-code'];
    if (typeof c === 'string') return c as ErrorCode;
  } else if (parent && typeof parent['x-error-code'] === 'string' && parent !== root) {
    return parent['x-error-code'] as ErrorCode;
  } else if (parent && parent !== root) {
    // A keyword of a nested schema without its own code: look for the code on the property that holds it.
    const top = err.instancePath.split('/')[1];
    const prop = top ? ((root.properties as Record<string, Sch> | undefined) ?? {})[top] : undefined;
    if (prop && typeof prop['x-error-code'] === 'string') return prop['x-error-code'] as ErrorCode;
  }
  const rootCode = root['x-error-code'];
  return typeof rootCode === 'string' ? (rootCode as ErrorCode) : fallback;
}

/** Edit distance (Levenshtein) between two short names. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** The accepted name closest to an unknown one, when it is plausibly what was meant. */
export function closestName(unknown: string, accepted: string[]): string | undefined {
  const u = unknown.toLowerCase();
  let best: string | undefined;
  let bestScore = Infinity;
  for (const name of accepted) {
    const n = name.toLowerCase();
    // `amount` for `amount_minor`, `email_address` for `email`: one contains the other.
    const contains = u.length >= 3 && (n.startsWith(u) || u.startsWith(n) || n.includes(u));
    const d = distance(u, n);
    const score = contains ? Math.min(d, 1) : d;
    if (score < bestScore && (contains || d <= Math.max(2, Math.floor(n.length / 3)))) {
      best = name;
      bestScore = score;
    }
  }
  return best;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The first field of `value` that `schema` does not accept (additionalProperties: false), looked for
 * before any other failure is reported: `{"amount": 100}` is about `amount`, not the missing
 * `amount_minor`.
 */
function unknownField(schema: Sch, value: unknown, path: string, root: Sch, where: 'body' | 'query'): ApiError | undefined {
  if (!isObject(value)) return undefined;
  const props = (schema.properties as Record<string, Sch> | undefined) ?? {};
  const names = Object.keys(props);
  if (schema.additionalProperties === false) {
    for (const k of Object.keys(value)) {
      if (Object.hasOwn(props, k)) continue;
      const name = path ? `${path}.${k}` : k;
      const guess = closestName(k, names);
      const what = where === 'query' ? 'a query parameter' : 'a field';
      const message = `\`${name}\` is not ${what}${path ? ` of \`${path}\`` : ''}${guess ? `; did you mean \`${guess}\`?` : '.'} Accepted: ${names.join(', ') || 'none'}.`;
      const rootCode = root['x-error-code'];
      return new ApiError(typeof rootCode === 'string' ? (rootCode as ErrorCode) : where === 'body' ? 'request.invalid_body' : 'request.invalid_query', message);
    }
  }
  for (const k of names) {
    if (!Object.hasOwn(value, k)) continue;
    const e = unknownField(props[k], value[k], path ? `${path}.${k}` : k, root, where);
    if (e) return e;
  }
  return undefined;
}

function compile<T>(ajv: Ajv, schema: object, where: 'body' | 'query'): Validator<T> {
  const fn: ValidateFunction = ajv.compile(schema);
  const fallback = where === 'body' ? 'request.invalid_body' : 'request.invalid_query';
  return (value) => {
    if (fn(value)) {
      // Ajv's string-to-number coercion does not re-check what it made: "1e400" becomes Infinity.
      if (where === 'query') {
        for (const k in value as Record<string, unknown>) {
          const v = (value as Record<string, unknown>)[k];
          if (typeof v === 'number' && !Number.isFinite(v)) {
            throw new ApiError(codeFor({ keyword: 'type', instancePath: `/${k}`, parentSchema: ((schema as Sch).properties as Record<string, Sch>)?.[k] } as unknown as ErrorObject, fallback, schema as Sch), `\`${k}\` must be a finite number.`);
          }
        }
      }
      return value as T;
    }
    // The failure path only: unknown fields first, named with the closest accepted one.
    const unknown = unknownField(schema as Sch, value, '', schema as Sch, where);
    if (unknown) throw unknown;
    const err = fn.errors![0];
    throw new ApiError(codeFor(err, fallback, schema as Sch), describe(err, where));
  };
}

/** Compiles a body schema once. The validator returns the (defaulted) value or throws ApiError. */
export function compileBody<T>(schema: object): Validator<T> {
  return compile(bodyAjv, schema, 'body');
}

/** Compiles a query schema once (values coerced from strings). */
export function compileQuery<T>(schema: object): Validator<T> {
  return compile(queryAjv, schema, 'query');
}
