// Sub-merchant onboarding applications on the entity actor (kernel/entity.ts).
// spec: Resources and States > onboarding_application; Endpoints > Sub-merchant onboarding;
// Errors > Onboarding; decisions.md §2 (operator actions), §6 (submit rules).
//
// - Every change is a step of the application machine under its lock with the version fence, so
//   an edit after resolution, and the second of two racing submits, is transition_conflict (409).
// - Submit verifies synchronously: completeness (400, nothing written), then RFC/CLABE formats
//   (needs_info with status_reason) and the taxpayer lists (rejected), else approved.
// - The full CLABE is sealed (ops/secret-box.ts) and shown only as `clabe_masked`.
import { eventDataOf } from '../kernel/json.js';
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { hydrateRow, type EntityActor, type EntityRow, type EntityDef, type Hydrated, type Plan, type StepEnv } from '../kernel/entity.js';
import { ApiError } from '../kernel/errors.js';
import type { IdempotencyHandle } from '../kernel/idempotency.js';
import { initialState, machineStep } from '../kernel/machine-step.js';
import type { Principal } from '../kernel/principal.js';
import { maskClabe } from '../formats/clabe.js';
import type { PersonType } from '../formats/rfc.js';
import type { ListMatch, TaxpayerScreen } from '../connectors/taxpayer-lists.js';
import { onboardingMachine, type OnboardingEvent, type OnboardingWebhook, type Verdict } from '../machines/onboarding-application.js';
import type { SecretBox } from '../kernel/secret-box.js';
import { AUTOMATIC_VERIFIER, DOCUMENT_TYPES, OPERATOR, completeness, verdictOf } from './onboarding-verification.js';

export interface ApplicationDocument {
  document_type: string;
  reference: string;
  reference_hash: string;
  created_at: string;
}

export interface ApplicationRow extends EntityRow {
  legal_name: string;
  person_type: PersonType;
  contact_email: string;
  rfc: string | null;
  clabe_sealed: string | null;
  clabe_masked: string | null;
  /** One document per type, keyed by `document_type` (a jsonb object). */
  documents: Record<string, ApplicationDocument>;
  status_reason: string | null;
  resolved_by: string | null;
  submitted_at: Date | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

type HydratedApplication = Hydrated<ApplicationRow>;

export interface ApplicationFields {
  legal_name?: string;
  person_type?: PersonType;
  contact_email?: string;
  rfc?: string;
  clabe?: string;
  documents?: ReadonlyArray<{ document_type: string; reference: string; reference_hash: string }>;
}

export type OnboardingCommand =
  | { kind: 'edit'; fields: ApplicationFields }
  | { kind: 'submit' }
  | { kind: 'operator'; action: 'approve' | 'reject' | 'request_info'; reason?: string };

/** What a submit or an operator approval learnt outside the transaction (the list lookup, the completeness check). */
type Prepared = { verdict?: Verdict } | undefined;

export const clabeContext = (applicationId: string) => `onboarding_application:${applicationId}:clabe`;
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const toRow = (r: Record<string, unknown>): ApplicationRow => ({ ...(r as unknown as ApplicationRow), documents: (r.documents as Record<string, ApplicationDocument> | null) ?? {} });
/** The documents in the order of the spec's list of types. */
const documentList = (docs: Record<string, ApplicationDocument>) => DOCUMENT_TYPES.filter((t) => docs[t]).map((t) => docs[t]);

/** The application as the API shows it; `documents` on read only (spec: lists are without documents). */
export function applicationView(r: ApplicationRow, withDocuments = true) {
  return {
    id: r.id,
    object: 'onboarding_application' as const,
    status: r.status,
    legal_name: r.legal_name,
    person_type: r.person_type,
    contact_email: r.contact_email,
    rfc: r.rfc,
    clabe_masked: r.clabe_masked,
    ...(withDocuments ? { documents: documentList(r.documents) } : {}),
    status_reason: r.status_reason,
    resolved_by: r.resolved_by,
    submitted_at: iso(r.submitted_at),
    resolved_at: iso(r.resolved_at),
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/** The data of onboarding_application.* events: the list projection without absent fields. */
function eventData(r: ApplicationRow) {
  return eventDataOf(applicationView(r, false));
}

const MACHINE_EVENT = { approve: 'operator.approve', reject: 'operator.reject', request_info: 'operator.request_info' } as const;

function refuse(r: ApplicationRow, what: string): never {
  throw new ApiError('onboarding_application.transition_conflict', `Application ${r.id} is ${r.status}: ${what} only while it is draft or needs_info.`);
}

/** An application's step: pure (machine → row, history, event). `seal` seals a new CLABE for this row. */
export function planApplicationStep(h: HydratedApplication, cmd: OnboardingCommand, env: StepEnv, prepared: Prepared, seal: (clabe: string) => string): Plan<ApplicationRow> {
  const r = h.row;
  let event: OnboardingEvent;
  if (cmd.kind === 'edit') event = { type: 'edit' };
  else if (cmd.kind === 'submit') event = { type: 'submit', verdict: prepared!.verdict! };
  else event = { type: MACHINE_EVENT[cmd.action], reason: cmd.reason };
  if (!onboardingMachine.resolveState({ value: r.status, context: undefined as never }).can(event)) {
    refuse(r, cmd.kind === 'edit' ? 'it can be edited' : cmd.kind === 'submit' ? 'it can be submitted' : 'an operator can resolve it');
  }
  const step = machineStep(onboardingMachine, r.status, undefined, event);
  const set: Record<string, unknown> = { updated_at: env.at };
  const changed: string[] = [];
  const emits: OnboardingWebhook[] = [];
  for (const e of step.effects) {
    if (e.type === 'applyEdit' && cmd.kind === 'edit') {
      const f = cmd.fields;
      for (const k of ['legal_name', 'person_type', 'contact_email', 'rfc'] as const) {
        if (f[k] !== undefined) {
          set[k] = k === 'rfc' ? f.rfc!.trim().toUpperCase() : f[k];
          changed.push(k);
        }
      }
      if (f.clabe !== undefined) {
        const clabe = f.clabe.trim();
        set.clabe_sealed = seal(clabe);
        set.clabe_masked = maskAny(clabe);
        changed.push('clabe');
      }
      if (f.documents?.length) {
        // A document replaces an earlier one of the same type; the others stay.
        const docs = { ...r.documents };
        for (const d of f.documents) docs[d.document_type] = { document_type: d.document_type, reference: d.reference, reference_hash: d.reference_hash, created_at: env.at.toISOString() };
        set.documents = docs;
        changed.push('documents');
      }
    } else if (e.type === 'resolveAutomatically' && event.type === 'submit') {
      set.status_reason = event.verdict.result === 'approved' ? null : event.verdict.reason;
      set.resolved_by = AUTOMATIC_VERIFIER;
      set.submitted_at = env.at;
      set.resolved_at = env.at;
    } else if (e.type === 'resolveByOperator' && cmd.kind === 'operator') {
      set.status_reason = cmd.reason ?? null;
      set.resolved_by = OPERATOR;
      set.resolved_at = env.at;
    } else if (e.type === 'emit') {
      emits.push((e.params as { event: OnboardingWebhook }).event);
    }
  }
  if (step.value !== r.status) set.status = step.value;
  const updated = toRow({ ...r, ...set, version: r.version + 1 });
  return {
    set,
    history: {
      event: event.type,
      data: cmd.kind === 'edit' ? { fields: changed } : event.type === 'submit' ? { result: event.verdict.result } : { reason: cmd.kind === 'operator' ? cmd.reason ?? null : null },
    },
    events: emits.map((type) => ({ type, data: eventData(updated) })),
    result: updated,
  };
}

/** A CLABE-like value masked for display, whatever its length (a malformed one is stored too, until submit says so). */
export function maskAny(value: string): string {
  if (value.length === 18) return maskClabe(value);
  return value.length > 7 ? `${value.slice(0, 3)}${'*'.repeat(value.length - 7)}${value.slice(-4)}` : '*'.repeat(value.length);
}

export interface OnboardingDeps {
  sql: Sql;
  actor: EntityActor;
  secrets: SecretBox;
  /** Test mode: the sim list; live mode: the operator-loaded lists. */
  screens: { test: TaxpayerScreen; live: TaxpayerScreen };
}

export class Onboarding {
  readonly def: EntityDef<HydratedApplication, OnboardingCommand, Prepared>;

  constructor(private d: OnboardingDeps) {
    this.def = {
      kind: 'onboarding_application',
      table: 'onboarding_applications',
      notFound: 'onboarding_application.not_found',
      // spec: a race is transition_conflict.
      busy: 'onboarding_application.transition_conflict',
      hydrate: hydrateRow('onboarding_applications', toRow),
      prepare: (h, cmd) => this.prepare(h, cmd),
      plan: (h, cmd, env, prepared) => planApplicationStep(h, cmd, env, prepared, (clabe) => this.d.secrets.seal(clabe, clabeContext(h.row.id))),
    };
  }

  /** The full CLABE of an application (for verification and for its connect account); never shown. */
  openClabe(r: Pick<ApplicationRow, 'id' | 'clabe_sealed'>): string | null {
    return r.clabe_sealed ? this.d.secrets.open(r.clabe_sealed, clabeContext(r.id)) : null;
  }

  /** Submit and operator approval: completeness first (400, nothing written); submit then verifies. */
  private async prepare(h: HydratedApplication, cmd: OnboardingCommand): Promise<Prepared> {
    if (cmd.kind === 'edit' || (cmd.kind === 'operator' && cmd.action !== 'approve')) return undefined;
    const r = h.row;
    // A resolved application answers transition_conflict before any 400 about its content.
    if (r.status !== 'draft' && r.status !== 'needs_info') refuse(r, cmd.kind === 'submit' ? 'it can be submitted' : 'an operator can resolve it');
    const facts = { legal_name: r.legal_name, person_type: r.person_type, contact_email: r.contact_email, rfc: r.rfc, clabe: this.openClabe(r), documents: documentList(r.documents) };
    const c = completeness(facts);
    if (!c.ok) throw new ApiError(c.code, c.message);
    if (cmd.kind === 'operator') return undefined;
    const complete = { ...facts, rfc: r.rfc!, clabe: facts.clabe!, person_type: r.person_type };
    const screen = r.livemode ? this.d.screens.live : this.d.screens.test;
    const normalized = r.rfc!.trim().toUpperCase();
    const match: ListMatch | null = await screen.match(normalized);
    return { verdict: verdictOf(complete, match) };
  }

  async create(p: Principal, body: ApplicationFields & { legal_name: string; person_type: PersonType; contact_email: string }, idem?: IdempotencyHandle) {
    const at = new Date();
    const id = randomUUID();
    const clabe = body.clabe?.trim();
    const row: ApplicationRow = {
      id, tenant_id: p.tenantId, livemode: p.livemode, status: initialState(onboardingMachine), version: 0,
      legal_name: body.legal_name, person_type: body.person_type, contact_email: body.contact_email,
      rfc: body.rfc ? body.rfc.trim().toUpperCase() : null,
      clabe_sealed: clabe ? this.d.secrets.seal(clabe, clabeContext(id)) : null, clabe_masked: clabe ? maskAny(clabe) : null,
      documents: {}, status_reason: null, resolved_by: null, submitted_at: null, resolved_at: null, created_at: at, updated_at: at,
    };
    const view = applicationView(row);
    await this.d.actor.create(this.def, p, {
      create: { ...row },
      history: { event: 'create' },
      response: { status: 201, body: view },
      result: row,
    }, { idem, at });
    return view;
  }

  async patch(p: Principal, id: string, fields: ApplicationFields, idem?: IdempotencyHandle) {
    const row = await this.d.actor.run<HydratedApplication, OnboardingCommand, Prepared, ApplicationRow>(this.def, p, id, { kind: 'edit', fields }, { waitMs: 2000, idem });
    return applicationView(row);
  }

  async submit(p: Principal, id: string, idem?: IdempotencyHandle) {
    const row = await this.d.actor.run<HydratedApplication, OnboardingCommand, Prepared, ApplicationRow>(this.def, p, id, { kind: 'submit' }, { waitMs: 2000, idem });
    return applicationView(row);
  }

  /** Operator action (decisions.md §2): approve, reject or request information, with a reason. */
  async operator(tenantId: string, id: string, action: 'approve' | 'reject' | 'request_info', reason?: string) {
    const [t] = await this.d.sql`select livemode from onboarding_applications where id = ${id} and tenant_id = ${tenantId}`;
    if (!t) throw new ApiError('onboarding_application.not_found', `No application ${id} for tenant ${tenantId}.`);
    const row = await this.d.actor.run<HydratedApplication, OnboardingCommand, Prepared, ApplicationRow>(this.def, { tenantId, livemode: t.livemode as boolean }, id, { kind: 'operator', action, reason }, { waitMs: 2000 });
    return applicationView(row);
  }

  async get(p: Principal, id: string) {
    const [r] = await this.d.sql`select * from onboarding_applications where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (!r) throw new ApiError('onboarding_application.not_found', `No onboarding application ${id} exists for this key.`);
    return applicationView(toRow(r));
  }

  async list(p: Principal, q: { status?: string; limit?: number }) {
    const limit = Math.min(Math.max(1, q.limit ?? 100), 500);
    const rows = await this.d.sql`
      select * from onboarding_applications
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} ${q.status ? this.d.sql`and status = ${q.status}` : this.d.sql``}
       order by created_at desc, id desc limit ${limit}`;
    return { object: 'list' as const, data: rows.map((r) => applicationView(toRow(r), false)) };
  }
}
