// Customers: create, list, read. Every query is scoped by tenant and mode, so another tenant's id
// answers exactly like an unknown one (architecture invariant 7).
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import { saveIdempotent, type IdempotencyHandle } from '../kernel/idempotency.js';
import type { Principal } from '../kernel/principal.js';
import type { CreateCustomerBody } from '../schemas/customers.js';

export interface Customer {
  id: string;
  object: 'customer';
  name: string | null;
  email: string | null;
  metadata: Record<string, string> | null;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

function view(r: Record<string, unknown>): Customer {
  return {
    id: r.id as string,
    object: 'customer',
    name: (r.name as string | null) ?? null,
    email: (r.email as string | null) ?? null,
    metadata: (r.metadata as Record<string, string> | null) ?? null,
    livemode: r.livemode as boolean,
    created_at: (r.created_at as Date).toISOString(),
    updated_at: (r.updated_at as Date).toISOString(),
  };
}

export async function createCustomer(deps: { sql: Sql }, p: Principal, body: CreateCustomerBody, idem?: IdempotencyHandle): Promise<Customer> {
  return deps.sql.begin(async (tx) => {
    const [row] = await tx`
      insert into customers (id, tenant_id, livemode, name, email, metadata)
      values (${randomUUID()}, ${p.tenantId}, ${p.livemode}, ${body.name ?? null}, ${body.email ?? null}, ${body.metadata ? tx.json(body.metadata) : null})
      returning *`;
    const customer = view(row);
    await saveIdempotent(tx, idem, 201, customer);
    return customer;
  });
}

export async function getCustomer(deps: { sql: Sql }, p: Principal, id: string): Promise<Customer> {
  const rows = await deps.sql`
    -- one customer of this tenant and mode (a deleted one reads as unknown)
    select * from customers where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null`;
  if (!rows.length) throw new ApiError('customer.not_found'); // same message as a malformed id: nothing to tell apart
  return view(rows[0]);
}

/**
 * spec: Limits > Simple lists: the tenant's whole set (up to 10,000), optional limit clamped to 500,
 * newest first; `email` filters (case-insensitive, exact). Deleted customers are not listed.
 */
export async function listCustomers(deps: { readSql: Sql }, p: Principal, limit?: number, email?: string): Promise<{ object: 'list'; data: Customer[] }> {
  const n = limit === undefined ? 10_000 : Math.min(limit, 500);
  const sql = deps.readSql;
  const rows = await sql`
    select * from customers where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null
           ${email ? sql`and lower(email) = lower(${email})` : sql``}
    order by created_at desc, id limit ${n}`;
  return { object: 'list', data: rows.map(view) };
}

/** Updates the fields sent (Stripe: POST /v1/customers/{id}); metadata keys merge, a key set to "" is removed. */
export async function updateCustomer(deps: { sql: Sql }, p: Principal, id: string, body: CreateCustomerBody, idem?: IdempotencyHandle): Promise<Customer> {
  return deps.sql.begin(async (tx) => {
    const [c] = await tx`select * from customers where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null for update`;
    if (!c) throw new ApiError('customer.not_found');
    let meta = (c.metadata as Record<string, string> | null) ?? null;
    if (body.metadata) {
      const merged: Record<string, string> = { ...(meta ?? {}) };
      for (const [k, v] of Object.entries(body.metadata)) {
        if (v === '') delete merged[k];
        else merged[k] = v;
      }
      meta = Object.keys(merged).length ? merged : null;
    }
    const [row] = await tx`
      update customers set name = ${body.name ?? (c.name as string | null)}, email = ${body.email ?? (c.email as string | null)},
             metadata = ${meta ? tx.json(meta) : null}, updated_at = now()
       where id = ${id} returning *`;
    const customer = view(row);
    await saveIdempotent(tx, idem, 200, customer);
    return customer;
  });
}

/** Deletes a customer (logically: its intents and saved methods keep their history); its active methods are detached. */
export async function deleteCustomer(deps: { sql: Sql; methods: { detachAllOf(p: Principal, customerId: string): Promise<number> } }, p: Principal, id: string) {
  const rows = await deps.sql`
    update customers set deleted_at = now(), updated_at = now() where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode} and deleted_at is null returning id`;
  if (!rows.length) throw new ApiError('customer.not_found');
  // Each saved method is detached through its own actor (history, fence); a retry of the delete finishes the job.
  await deps.methods.detachAllOf(p, id);
  return { id, object: 'customer' as const, deleted: true as const };
}
