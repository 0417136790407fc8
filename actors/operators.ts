// Named operators (issue 30; docs/operator.md) on the merchant portal's accounts: an operator is a
// member of the platform's own tenant (portal_members: scrypt password, TOTP, sessions, resets) with
// an operator role (migration 0152). No second account system: sign-in, the second factor, session
// expiry and password resets are the portal's (actors/portal-accounts.ts). What is added here: the
// platform tenant (made once, no API keys, second factor required of every member), the roles and
// what they may do, and four-eyes decisions (a second operator decides what the first asked).
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import { hashPassword } from '../kernel/passwords.js';
import type { Principal } from '../kernel/principal.js';
import { appendAudit, type AuditActor } from './audit.js';

export const OPERATOR_ROLES = ['admin', 'reviewer', 'support', 'viewer'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** What an operator route needs. */
export type Permission = 'read' | 'decide' | 'terminals' | 'simulate' | 'tenants' | 'operators';

const CAN: Record<OperatorRole, readonly Permission[]> = {
  // everything, including other operators, tenants (suspend, release, keys, settings) and risk rules
  admin: ['read', 'decide', 'terminals', 'simulate', 'tenants', 'operators'],
  // onboarding, risk reviews, refund and payout approvals, Connect accounts, terminals, test simulations
  reviewer: ['read', 'decide', 'terminals', 'simulate'],
  // reads everything; terminals and test-mode simulations for merchants on the phone
  support: ['read', 'terminals', 'simulate'],
  viewer: ['read'],
};

export const permissionsOf = (role: OperatorRole): readonly Permission[] => CAN[role];

export interface OperatorActor extends AuditActor {
  kind: 'operator';
  id: string;
  name: string;
  email: string;
  role: OperatorRole;
}

const norm = (e: string) => e.trim().toLowerCase();

export function operatorView(r: Record<string, unknown>) {
  return {
    id: r.member_id as string,
    object: 'operator' as const,
    email: r.email as string,
    name: r.name as string,
    role: r.role as OperatorRole,
    permissions: [...CAN[r.role as OperatorRole]],
    totp_enabled: !!r.totp_enabled_at,
    status: r.status as string,
    created_at: (r.created_at as Date).toISOString(),
    ...(r.last_sign_in_at ? { last_sign_in_at: (r.last_sign_in_at as Date).toISOString() } : {}),
  };
}

export interface OperatorsDeps {
  sql: Sql;
  /** The portal's password reset (a link through the notification outbox): how a new operator sets a password. */
  requestReset(email: string, resetBaseUrl: string): Promise<void>;
  publicBaseUrl: string;
}

export class Operators {
  private platform?: string;

  constructor(private d: OperatorsDeps) {}

  /** The platform's own tenant (made once: no API keys; every member needs a second factor). */
  async platformTenantId(): Promise<string> {
    if (this.platform) return this.platform;
    const sql = this.d.sql;
    const [found] = await sql`select tenant_id from operator_platform`;
    if (found) return (this.platform = found.tenant_id as string);
    const id = randomUUID();
    await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext('operator_platform'))`;
      const [again] = await tx`select tenant_id from operator_platform`;
      if (again) return;
      await tx`insert into tenants (id, name) values (${id}, 'Orquesta · operadores')`;
      await tx`insert into operator_platform (tenant_id) values (${id})`;
      await tx`insert into portal_settings (tenant_id, require_totp) values (${id}, true) on conflict (tenant_id) do update set require_totp = true`;
    });
    const [r] = await sql`select tenant_id from operator_platform`;
    return (this.platform = r.tenant_id as string);
  }

  /**
   * A new operator: a member of the platform tenant with an operator role. With `password` (the
   * bootstrap by the admin key) it is set; without, the portal sends a link to choose one. Either
   * way the first sign-in asks for a second factor before anything else.
   */
  async create(by: AuditActor, body: { email: string; name: string; role: OperatorRole; password?: string }, requestId?: string) {
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(body.email)) throw new ApiError('operator.invalid_email');
    if (!OPERATOR_ROLES.includes(body.role)) throw new ApiError('operator.invalid_role');
    if (body.password !== undefined && body.password.length < 12) throw new ApiError('operator.invalid_password');
    const tenantId = await this.platformTenantId();
    const id = randomUUID();
    const hash = body.password ? await hashPassword(body.password) : null;
    try {
      await this.d.sql.begin(async (tx) => {
        await tx`
          insert into portal_members (id, tenant_id, email, name, role, password_hash)
          values (${id}, ${tenantId}, ${norm(body.email)}, ${body.name}, 'viewer', ${hash})`;
        await tx`insert into operators (member_id, role, created_by) values (${id}, ${body.role}, ${`${by.kind}:${by.id}`})`;
        await appendAudit(tx, { actor: by, action: 'operator.create', targetKind: 'operator', targetId: id, after: { email: norm(body.email), name: body.name, role: body.role }, requestId });
      });
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw new ApiError('operator.email_conflict');
      throw e;
    }
    if (!body.password) await this.d.requestReset(body.email, `${this.d.publicBaseUrl}/portal/operator`);
    return this.get(id);
  }

  async get(id: string) {
    const [r] = await this.d.sql`
      select o.member_id, o.role, o.created_at, m.email, m.name, m.status, m.totp_enabled_at, m.last_sign_in_at
        from operators o join portal_members m on m.id = o.member_id where o.member_id = ${id}`;
    if (!r) throw new ApiError('operator.not_found');
    return operatorView(r);
  }

  async list() {
    const rows = await this.d.sql`
      select o.member_id, o.role, o.created_at, m.email, m.name, m.status, m.totp_enabled_at, m.last_sign_in_at
        from operators o join portal_members m on m.id = o.member_id order by o.created_at, o.member_id`;
    return { object: 'list' as const, data: rows.map(operatorView) };
  }

  /** Another role, or disabled (its sessions end: the portal refuses a disabled member's session). */
  async update(by: OperatorActor | AuditActor, id: string, body: { role?: OperatorRole; status?: 'active' | 'disabled' }, requestId?: string, reason?: string) {
    if (by.kind === 'operator' && by.id === id && (body.status === 'disabled' || (body.role && body.role !== 'admin'))) throw new ApiError('operator.self_change_conflict');
    const before = await this.get(id);
    await this.d.sql.begin(async (tx) => {
      if (body.role) await tx`update operators set role = ${body.role}, updated_at = now() where member_id = ${id}`;
      if (body.status) {
        await tx`update portal_members set status = ${body.status} where id = ${id}`;
        if (body.status === 'disabled') await tx`update portal_sessions set ended_at = now() where member_id = ${id} and ended_at is null`;
      }
      const after = { ...before, ...(body.role ? { role: body.role } : {}), ...(body.status ? { status: body.status } : {}) };
      await appendAudit(tx, { actor: by, action: 'operator.update', targetKind: 'operator', targetId: id, reason, before, after, requestId });
    });
    return this.get(id);
  }

  /**
   * The operator behind a portal session, allowed to do `need`, or 403. A member of a merchant's team
   * is not an operator (operator.unauthorized); an operator without a second factor is refused
   * even where the portal's team rule would not ask for one.
   */
  async require(p: Principal, need: Permission): Promise<OperatorActor> {
    const m = p.member;
    if (!m) throw new ApiError('operator.unauthorized');
    const tenantId = await this.platformTenantId();
    const [r] = await this.d.sql`
      select o.role, pm.email, pm.name, pm.totp_enabled_at, pm.status
        from operators o join portal_members pm on pm.id = o.member_id
       where o.member_id = ${m.id} and pm.tenant_id = ${tenantId}`;
    if (!r || r.status !== 'active') throw new ApiError('operator.unauthorized');
    if (!r.totp_enabled_at) throw new ApiError('operator.totp_required_unauthorized');
    const role = r.role as OperatorRole;
    if (!CAN[role].includes(need)) throw new ApiError('operator.role_unauthorized', `The ${role} role cannot do this (it needs "${need}"; roles: admin, reviewer, support, viewer).`);
    return { kind: 'operator', id: m.id, name: r.email as string, email: r.email as string, role };
  }
}
