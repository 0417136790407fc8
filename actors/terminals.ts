// Terminals (docs/terminals.md) on the entity actor (kernel/entity.ts): register (serial, branch,
// register, label) → `registered`; activate → `active`; deactivate → `inactive`; reassign (another
// branch or register) in any state. Every change is a step of machines/terminal.ts with its history
// row, its outbox event (`terminal.*`, webhooks and /v1/events) and its audit row, in one
// transaction. Administration is a portal / operator action, never a /v1 endpoint (spec); /v1 only
// asks `isActive` when a charge names `metadata.terminal_id` (decisions.md §7).
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { hydrateRow, type EntityActor, type EntityDef, type Hydrated, type Plan, type PlannedEvent, type Scope, type StepEnv } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import { initialState, machineStep, type Effect } from '../kernel/machine-step.js';
import { terminalMachine, type TerminalWebhook } from '../machines/terminal.js';
import { auditWrite, type AuditActor } from './audit.js';
import { assertTenant } from './tenants.js';

export interface TerminalRow {
  id: string;
  tenant_id: string;
  livemode: boolean;
  status: string;
  version: number;
  serial: string;
  branch: string;
  register: string | null;
  label: string | null;
  activated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The terminal's projection: absent fields omitted (no nulls), as every authenticated answer. */
export function terminalView(r: TerminalRow) {
  return {
    id: r.id,
    object: 'terminal' as const,
    serial: r.serial,
    branch: r.branch,
    ...(r.register !== null ? { register: r.register } : {}),
    ...(r.label !== null ? { label: r.label } : {}),
    status: r.status,
    livemode: r.livemode,
    ...(r.activated_at ? { activated_at: r.activated_at.toISOString() } : {}),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}
export type TerminalView = ReturnType<typeof terminalView>;

/** Who asks, why, and the request it came with: every terminal command carries them for the audit log. */
export interface Attribution {
  actor: AuditActor;
  reason?: string;
  requestId?: string;
}

export type TerminalCommand =
  | ({ kind: 'activate' | 'deactivate' } & Attribution)
  | ({ kind: 'reassign'; branch: string; register?: string | null } & Attribution);

export interface RegisterTerminal {
  serial: string;
  branch: string;
  register?: string;
  label?: string;
}

const SERIAL = /^[A-Za-z0-9._-]{1,64}$/;

/** The portal's checks of a terminal's fields (the edge's schema says the same for HTTP callers). */
export function checkFields(b: { serial?: unknown; branch?: unknown; register?: unknown; label?: unknown }, creating: boolean) {
  if (creating && (typeof b.serial !== 'string' || !SERIAL.test(b.serial))) throw new ApiError('terminal.invalid_serial');
  if (typeof b.branch !== 'string' || b.branch.trim().length === 0 || b.branch.length > 200) throw new ApiError('terminal.invalid_branch');
  if (b.register !== undefined && b.register !== null && (typeof b.register !== 'string' || b.register.length === 0 || b.register.length > 200)) throw new ApiError('terminal.invalid_register');
}

/** One terminal step: pure (machine → row, history, event, audit row). */
export function planTerminalStep(h: Hydrated<TerminalRow>, cmd: TerminalCommand, env: StepEnv): Plan<TerminalRow> {
  const r = h.row;
  const step = machineStep<Effect>(terminalMachine, r.status, undefined, { type: cmd.kind });
  const set: Record<string, unknown> = {};
  if (cmd.kind === 'reassign') {
    const register = cmd.register === undefined ? r.register : cmd.register;
    if (cmd.branch === r.branch && register === r.register) return { result: r }; // nothing moves: a no-op
    set.branch = cmd.branch;
    set.register = register;
  }
  if (step.value !== r.status) set.status = step.value;
  if (step.value === 'active' && r.status !== 'active') set.activated_at = env.at;
  if (Object.keys(set).length === 0) return { result: r }; // activating an active terminal, …: a no-op
  set.updated_at = env.at;
  const updated = { ...r, ...set, version: r.version + 1 } as TerminalRow;
  const before = terminalView(r);
  const after = terminalView(updated);
  const events: PlannedEvent[] = step.effects
    .filter((e) => e.type === 'emit')
    .map((e) => ({ type: (e.params as { event: TerminalWebhook }).event, data: after }));
  return {
    set,
    history: { event: cmd.kind, data: { actor: `${cmd.actor.kind}:${cmd.actor.id}`, ...(cmd.kind === 'reassign' ? { from_branch: r.branch, to_branch: updated.branch } : {}) } },
    events,
    writes: [
      auditWrite(env, {
        actor: cmd.actor, action: `terminal.${cmd.kind}`, tenantId: r.tenant_id, livemode: r.livemode, targetKind: 'terminal', targetId: r.id,
        reason: cmd.reason, before, after, requestId: cmd.requestId,
      }),
    ],
    result: updated,
  };
}

const toTerminal = (r: Record<string, unknown>) => r as unknown as TerminalRow;
const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

export interface TerminalsDeps {
  sql: Sql;
  actor: EntityActor;
}

export class Terminals {
  readonly def: EntityDef<Hydrated<TerminalRow>, TerminalCommand>;

  constructor(private d: TerminalsDeps) {
    this.def = {
      kind: 'terminal',
      table: 'terminals',
      notFound: 'terminal.not_found',
      busy: 'terminal.concurrent_modification',
      hydrate: hydrateRow('terminals', toTerminal),
      plan: (h, cmd, env) => planTerminalStep(h, cmd, env),
    };
  }

  /** Registers a terminal (`registered`; `activate: true` activates it in the same call, two steps). */
  async register(scope: Scope, body: RegisterTerminal & { activate?: boolean }, by: Attribution): Promise<TerminalView> {
    checkFields(body, true);
    const at = new Date();
    const row: TerminalRow = {
      id: randomUUID(), tenant_id: scope.tenantId, livemode: scope.livemode, status: initialState(terminalMachine), version: 0,
      serial: body.serial, branch: body.branch, register: body.register ?? null, label: body.label ?? null, activated_at: null, created_at: at, updated_at: at,
    };
    const view = terminalView(row);
    const env: StepEnv = { at, now: at, newId: randomUUID };
    try {
      await this.d.actor.create(this.def, scope, {
        create: { ...row },
        history: { event: 'register', data: { actor: `${by.actor.kind}:${by.actor.id}` } },
        events: [{ type: 'terminal.registered', data: view }],
        writes: [auditWrite(env, { actor: by.actor, action: 'terminal.register', tenantId: scope.tenantId, livemode: scope.livemode, targetKind: 'terminal', targetId: row.id, reason: by.reason, after: view, requestId: by.requestId })],
        result: view,
      }, { at });
    } catch (e) {
      if ((e as { code?: string; constraint_name?: string }).code === '23505' && (e as { constraint_name?: string }).constraint_name === 'terminals_serial') {
        throw new ApiError('terminal.serial_conflict', `This account already has a terminal with serial ${body.serial} in ${scope.livemode ? 'live' : 'test'} mode.`);
      }
      throw e;
    }
    return body.activate ? this.change(scope, row.id, { kind: 'activate', ...by }) : view;
  }

  async change(scope: Scope, id: string, cmd: TerminalCommand): Promise<TerminalView> {
    if (cmd.kind === 'reassign') checkFields(cmd, false);
    const row = await this.d.actor.run<Hydrated<TerminalRow>, TerminalCommand, void, TerminalRow>(this.def, scope, id, cmd, { waitMs: 3000, worker: false });
    return terminalView(row);
  }

  async get(scope: Scope, id: string): Promise<TerminalView> {
    const [r] = await this.d.sql`select * from terminals where id = ${id} and tenant_id = ${scope.tenantId} and livemode = ${scope.livemode}`;
    if (!r) throw new ApiError('terminal.not_found');
    return terminalView(toTerminal(r));
  }

  /** The tenant's terminals (of one mode, or both), newest first (operator listings: default 100, maximum 500). */
  async list(scope: { tenantId: string; livemode?: boolean }, q: { status?: string; branch?: string; limit?: number }) {
    const limit = Math.min(Math.max(q.limit ?? 100, 1), 500);
    const rows = await this.d.sql`
      select * from terminals where tenant_id = ${scope.tenantId} ${scope.livemode !== undefined ? this.d.sql`and livemode = ${scope.livemode}` : this.d.sql``}
        ${q.status ? this.d.sql`and status = ${q.status}` : this.d.sql``}
        ${q.branch ? this.d.sql`and branch = ${q.branch}` : this.d.sql``}
       order by created_at desc, id desc limit ${limit}`;
    return { object: 'list' as const, data: rows.map((r) => terminalView(toTerminal(r))) };
  }

  // ---- the operator's side (/admin, the operator console): the tenant by id, the mode from the row ----

  async registerFor(tenantId: string, body: RegisterTerminal & { livemode: boolean; activate?: boolean }, by: Attribution) {
    await assertTenant(this.d.sql, tenantId);
    const { livemode, ...rest } = body;
    return this.register({ tenantId, livemode }, rest, by);
  }

  /** The scope of a tenant's terminal (its mode is the row's), or terminal.not_found. */
  async scopeOf(tenantId: string, id: string): Promise<Scope> {
    const [r] = isUuid(id) ? await this.d.sql`select livemode from terminals where id = ${id} and tenant_id = ${tenantId}` : [];
    if (!r) throw new ApiError('terminal.not_found');
    return { tenantId, livemode: r.livemode as boolean };
  }

  async changeFor(tenantId: string, id: string, cmd: TerminalCommand) {
    return this.change(await this.scopeOf(tenantId, id), id, cmd);
  }

  async getFor(tenantId: string, id: string) {
    return this.get(await this.scopeOf(tenantId, id), id);
  }

  async listFor(tenantId: string, q: { livemode?: boolean; status?: string; branch?: string; limit?: number }) {
    await assertTenant(this.d.sql, tenantId);
    return this.list({ tenantId, livemode: q.livemode }, q);
  }

  /** Whether `id` is an active terminal of this tenant and mode (a malformed id is simply not one). */
  async isActive(tenantId: string, livemode: boolean, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const [r] = await this.d.sql`select 1 from terminals where id = ${id} and tenant_id = ${tenantId} and livemode = ${livemode} and status = 'active'`;
    return !!r;
  }
}
