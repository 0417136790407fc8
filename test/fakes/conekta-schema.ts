// Conekta's published interface as a validator (test/fixtures/conekta: a JSON Schema rendering of
// conekta/openapi@82ce68e, v2.3.0). The fake checks every request the adapter sends and every
// answer it gives against it, so neither can drift from what Conekta documents.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { projectRoot } from '../../ops/paths.js';

const addFormats = addFormatsModule as unknown as (a: Ajv2020) => Ajv2020;

export const CONEKTA_OPENAPI_COMMIT = '82ce68e7ce7727b0315f27c03322de80f9bf8976';
export type ConektaShape = 'order_request' | 'order_capture_request' | 'order_refund_request' | 'order_response' | 'order_list' | 'order_list_query' | 'error' | 'chargeback';

const schema = JSON.parse(readFileSync(join(projectRoot, 'test', 'fixtures', 'conekta', 'api-v2.3.0.schema.json'), 'utf8')) as Record<string, unknown>;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
ajv.addSchema(schema);
const SHAPES: ConektaShape[] = ['order_request', 'order_capture_request', 'order_refund_request', 'order_response', 'order_list', 'order_list_query', 'error', 'chargeback'];
// Compiled at load, so the first call a test makes is not slowed past the adapter's deadline.
const validators = new Map(SHAPES.map((s) => [s, ajv.getSchema(`conekta-v2.3.0-subset#/$defs/${s}`)!]));

/** null when `value` is a valid `shape`; otherwise the validation errors, one line. */
export function conektaViolation(shape: ConektaShape, value: unknown): string | null {
  const v = validators.get(shape);
  if (!v) throw new Error(`no Conekta shape ${shape}`);
  if (v(value)) return null;
  return (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}
