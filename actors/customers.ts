// Customers: create, list, read. Every query is scoped by tenant and mode, so another tenant's id
// answers exactly like an unknown one (architecture invariant 7).
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../api/deps.js';
import { ApiError } from '../api/errors.js';
import { saveIdempotent, type IdempotencyHandle } from '../api/idempotency.js';
import type { Principal } from '../api/route.js';
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

export async function createCustomer(deps: Pick<AppDeps, 'sql'>, p: Principal, body: CreateCustomerBody, idem?: IdempotencyHandle): Promise<Customer> {
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

export async function getCustomer(deps: Pick<AppDeps, 'sql'>, p: Principal, id: string): Promise<Customer> {
  const rows = await deps.sql`
    -- one customer of this tenant and mode
    select * from customers where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!rows.length) throw new ApiError('customer.not_found'); // same message as a malformed id: nothing to tell apart
  return view(rows[0]);
}

/** spec: Limits > Simple lists: the tenant's whole set (up to 10,000), optional limit clamped to 500, newest first. */
export async function listCustomers(deps: Pick<AppDeps, 'readSql'>, p: Principal, limit?: number): Promise<{ object: 'list'; data: Customer[] }> {
  const n = limit === undefined ? 10_000 : Math.min(limit, 500);
  const rows = await deps.readSql`
    select * from customers where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
    order by created_at desc, id limit ${n}`;
  return { object: 'list', data: rows.map(view) };
}
