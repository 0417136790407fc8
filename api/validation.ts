// Request schemas compiled once into Ajv validators; failures mapped to the spec's error codes
// through the x-error-code keywords of schemas/common.ts, with a message that names the field.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ISO_4217_SET } from '../schemas/currency.js';
import type { ErrorCode } from './error-catalog.js';
import { ApiError } from './errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ allErrors: false, verbose: true, strict: true, coerceTypes, useDefaults: true, allowUnionTypes: true });
  addFormats(ajv);
  for (const kw of ['x-error-code', 'x-required-error-code', 'x-error-message']) {
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

function describe(err: ErrorObject, where: 'body' | 'query'): string {
  const field = fieldName(err);
  const own = (err.parentSchema as Sch | undefined)?.['x-error-message'];
  if (typeof own === 'string' && err.keyword !== 'required') return own;
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required': {
      const propSchema = ((err.parentSchema as Sch | undefined)?.properties as Record<string, Sch> | undefined)?.[String(p.missingProperty)];
      const msg = propSchema?.['x-error-message'];
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

/** Compiles a body schema once. The validator returns the (defaulted) value or throws ApiError. */
export function compileBody<T>(schema: object): Validator<T> {
  const fn: ValidateFunction = bodyAjv.compile(schema);
  return (value) => {
    if (fn(value)) return value as T;
    const err = fn.errors![0];
    throw new ApiError(codeFor(err, 'request.invalid_body', schema as Sch), describe(err, 'body'));
  };
}

/** Compiles a query schema once (values coerced from strings). */
export function compileQuery<T>(schema: object): Validator<T> {
  const fn: ValidateFunction = queryAjv.compile(schema);
  return (value) => {
    if (fn(value)) return value as T;
    const err = fn.errors![0];
    throw new ApiError(codeFor(err, 'request.invalid_query', schema as Sch), describe(err, 'query'));
  };
}
