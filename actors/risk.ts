// Operator-defined risk rules (decisions.md §2): `{field, operator, value, action}`; evaluated at
// confirm. A `block` rule wins over a `review` rule.
import { randomUUID } from 'node:crypto';
import type { Db } from '../kernel/db.js';
import type { RiskVerdict } from '../machines/payment-intent.js';
import { ApiError } from '../kernel/errors.js';
import { assertTenant } from './tenants.js';

export const RISK_FIELDS = ['amount_minor', 'tip_minor', 'total_minor', 'currency', 'payment_method'] as const;
export const RISK_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in'] as const;
export type RiskOperator = (typeof RISK_OPERATORS)[number];

export interface RiskRule {
  id: string;
  object: 'risk_rule';
  field: string;
  operator: RiskOperator;
  value: unknown;
  action: 'block' | 'review';
  created_at: string;
}

export interface RiskFacts {
  amount_minor: number;
  tip_minor: number;
  total_minor: number;
  currency: string;
  payment_method: string;
  metadata: Record<string, string> | null;
}

function factOf(f: RiskFacts, field: string): unknown {
  if (field.startsWith('metadata.')) return f.metadata?.[field.slice(9)];
  return (f as unknown as Record<string, unknown>)[field];
}

export function matches(rule: Pick<RiskRule, 'field' | 'operator' | 'value'>, facts: RiskFacts): boolean {
  const v = factOf(facts, rule.field);
  if (v === undefined || v === null) return false;
  const w = rule.value;
  switch (rule.operator) {
    case 'eq': return v === w;
    case 'neq': return v !== w;
    case 'gt': return typeof v === 'number' && typeof w === 'number' && v > w;
    case 'gte': return typeof v === 'number' && typeof w === 'number' && v >= w;
    case 'lt': return typeof v === 'number' && typeof w === 'number' && v < w;
    case 'lte': return typeof v === 'number' && typeof w === 'number' && v <= w;
    case 'in': return Array.isArray(w) && w.includes(v);
  }
}

export function evaluate(rules: Pick<RiskRule, 'id' | 'field' | 'operator' | 'value' | 'action'>[], facts: RiskFacts): { verdict: RiskVerdict; ruleId?: string } {
  const hits = rules.filter((r) => matches(r, facts));
  const block = hits.find((r) => r.action === 'block');
  if (block) return { verdict: 'block', ruleId: block.id };
  const review = hits.find((r) => r.action === 'review');
  if (review) return { verdict: 'review', ruleId: review.id };
  return { verdict: 'allow' };
}

export async function loadRules(db: Db, tenantId: string) {
  const rows = await db`select id, field, operator, value, action from risk_rules where tenant_id = ${tenantId} and active order by created_at`;
  return rows.map((r) => ({ id: r.id as string, field: r.field as string, operator: r.operator as RiskOperator, value: r.value as unknown, action: r.action as 'block' | 'review' }));
}

/** Adds a rule after checking that its operator fits its value (numbers for gt/gte/lt/lte, a list for in). */
export async function createRule(db: Db, tenantId: string, body: { field: string; operator: RiskOperator; value: unknown; action: 'block' | 'review' }): Promise<RiskRule> {
  if (['gt', 'gte', 'lt', 'lte'].includes(body.operator) && typeof body.value !== 'number') throw new ApiError('risk_rule.invalid', `Operator ${body.operator} needs a number value.`);
  if (body.operator === 'in' && !Array.isArray(body.value)) throw new ApiError('risk_rule.invalid', 'Operator in needs an array value.');
  await assertTenant(db, tenantId);
  const id = randomUUID();
  const [row] = await db`
    insert into risk_rules (id, tenant_id, field, operator, value, action)
    values (${id}, ${tenantId}, ${body.field}, ${body.operator}, ${db.json(body.value as never)}, ${body.action})
    returning created_at`;
  return { id, object: 'risk_rule', field: body.field, operator: body.operator, value: body.value, action: body.action, created_at: (row.created_at as Date).toISOString() };
}
