// Portal accounts (issue 29; docs/portal.md): the members of a tenant's team, their sessions, TOTP
// second factor, invitations, password resets, API keys issued from the portal, and the audit log of
// every portal action. Passwords use the signup's scrypt record (kernel/passwords.ts); session and
// invitation tokens are kept only as sha256 hashes; TOTP secrets are sealed (kernel/secret-box.ts).
// Messages to people (an invitation, a reset link) go through the notification outbox.
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Db, Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import { hashKey } from '../kernel/keys.js';
import { DUMMY_PASSWORD_RECORD, hashPassword, verifyPassword } from '../kernel/passwords.js';
import type { Principal } from '../kernel/principal.js';
import { isRole, scopesOf, type Role } from '../kernel/roles.js';
import type { SecretBox } from '../kernel/secret-box.js';
import { createApiKey, listApiKeys, revokeApiKey } from './tenants.js';

export const INVITATION_TTL_MS = 7 * 24 * 3600_000;
export const RESET_TTL_MS = 30 * 60_000;
const TOTP_PERIOD = 30;

export interface MemberView {
  id: string;
  object: 'portal_member';
  email: string;
  name: string;
  role: Role;
  scopes: string[];
  extra_scopes: string[];
  totp_enabled: boolean;
  status: 'active' | 'disabled';
  locale: 'es' | 'en';
  created_at: string;
  last_sign_in_at: string | null;
}

/** A signed-in member as the edge sees it on every portal request. */
export interface SessionRecord {
  member: MemberView;
  tenantId: string;
  tenantName: string;
  stage: 'totp' | 'full';
  csrfToken: string;
  /** The team requires two-factor sign-in and this member has not set it up yet. */
  totpSetupOwed: boolean;
  expiresAt: Date;
}

/** What a sign-in (or its second step) hands to the browser: the cookie's token, once. */
export interface IssuedSession {
  token: string;
  stage: 'totp' | 'full';
  csrfToken: string;
  member: MemberView;
  maxAgeSeconds: number;
}

/** Who did a portal action, for the audit log. */
export interface Actor {
  tenantId: string;
  memberId: string;
  email: string;
  ip?: string;
}

const norm = (email: string) => email.trim().toLowerCase();
const token = () => randomBytes(32).toString('base64url');

function memberView(r: Record<string, unknown>): MemberView {
  const role = r.role as Role;
  const extra = (r.extra_scopes as string[]) ?? [];
  return {
    id: r.id as string,
    object: 'portal_member',
    email: r.email as string,
    name: r.name as string,
    role,
    scopes: scopesOf(role, extra),
    extra_scopes: extra,
    totp_enabled: !!r.totp_enabled_at,
    status: r.status as 'active' | 'disabled',
    locale: r.locale as 'es' | 'en',
    created_at: (r.created_at as Date).toISOString(),
    last_sign_in_at: r.last_sign_in_at ? (r.last_sign_in_at as Date).toISOString() : null,
  };
}

export class PortalAccounts {
  constructor(
    private d: {
      sql: Sql;
      secrets: SecretBox;
      idleMinutes: number;
      maxHours: number;
      /** Drops a revoked API key from every process's cache (api/auth.ts KeyStore). */
      announceRevocation(keyId: string): Promise<void>;
    },
  ) {}

  // ---- sessions ---------------------------------------------------------------------------

  private async issue(tx: Db, member: Record<string, unknown>, stage: 'totp' | 'full'): Promise<IssuedSession> {
    const t = token();
    const csrf = token();
    // A second-factor step is short; a full session lives up to the absolute limit.
    const maxMs = stage === 'totp' ? 10 * 60_000 : this.d.maxHours * 3600_000;
    await tx`
      insert into portal_sessions (token_hash, member_id, tenant_id, stage, csrf_token, expires_at)
      values (${hashKey(t)}, ${member.id as string}, ${member.tenant_id as string}, ${stage}, ${csrf}, ${new Date(Date.now() + maxMs)})`;
    if (stage === 'full') await tx`update portal_members set last_sign_in_at = now() where id = ${member.id as string}`;
    return { token: t, stage, csrfToken: csrf, member: memberView(member), maxAgeSeconds: Math.floor(maxMs / 1000) };
  }

  /**
   * Email and password. A wrong pair (or an unknown email, which costs the same scrypt) is 401
   * portal.sign_in_invalid, counted by the edge per client address like a bad API key. With TOTP on,
   * the session is only a second-factor step until POST /portal/api/session/totp.
   */
  async signIn(email: string, password: string, ip: string): Promise<IssuedSession> {
    const [m] = await this.d.sql`
      select m.*, t.suspended_at as tenant_suspended_at from portal_members m join tenants t on t.id = m.tenant_id where lower(m.email) = ${norm(email)}`;
    const ok = await verifyPassword(password, (m?.password_hash as string | null) ?? DUMMY_PASSWORD_RECORD);
    if (!m || !ok || m.status !== 'active') throw new ApiError('portal.sign_in_invalid');
    // Said only to who knows the password: an operator suspended the account (keys and sessions refused too).
    if (m.tenant_suspended_at) throw new ApiError('portal.tenant_suspended_unauthorized');
    return this.d.sql.begin(async (tx) => {
      const s = await this.issue(tx, m, m.totp_enabled_at ? 'totp' : 'full');
      await this.auditIn(tx, { tenantId: m.tenant_id as string, memberId: m.id as string, email: m.email as string, ip }, 'session.sign_in', null, { stage: s.stage });
      return s;
    });
  }

  /** The second step: a TOTP code; the step's session ends and a new full one starts (rotation). */
  async signInTotp(stepToken: string | undefined, code: string, ip: string): Promise<IssuedSession> {
    const step = stepToken ? await this.lookup(stepToken, false) : undefined;
    if (!step || step.stage !== 'totp') throw new ApiError('portal.session_invalid');
    const [m] = await this.d.sql`select * from portal_members where id = ${step.member.id}`;
    await this.checkTotp(m, code);
    return this.d.sql.begin(async (tx) => {
      await tx`update portal_sessions set ended_at = now() where token_hash = ${hashKey(stepToken!)}`;
      const s = await this.issue(tx, m, 'full');
      await this.auditIn(tx, { tenantId: m.tenant_id as string, memberId: m.id as string, email: m.email as string, ip }, 'session.totp_verified', null, {});
      return s;
    });
  }

  private async checkTotp(m: Record<string, unknown>, code: string): Promise<void> {
    if (!m.totp_secret_sealed) throw new ApiError('portal.totp_invalid');
    const secret = this.d.secrets.open(m.totp_secret_sealed as string, `portal:totp:${String(m.id)}`);
    const totp = new TOTP({ secret: Secret.fromBase32(secret), period: TOTP_PERIOD, digits: 6, algorithm: 'SHA1' });
    const delta = /^\d{6}$/.test(code) ? totp.validate({ token: code, window: 1 }) : null;
    if (delta === null) throw new ApiError('portal.totp_invalid');
    const stepNo = Math.floor(Date.now() / 1000 / TOTP_PERIOD) + delta;
    // A code is accepted once: the step must be later than the last one accepted (a replay fails).
    const used = await this.d.sql`
      update portal_members set totp_last_step = ${stepNo}
       where id = ${m.id as string} and (totp_last_step is null or totp_last_step < ${stepNo}) returning id`;
    if (!used.length) throw new ApiError('portal.totp_invalid');
  }

  /**
   * The session of a cookie token, touched (idle expiry moves on), or undefined when there is none:
   * ended, idle past PORTAL_SESSION_IDLE_MINUTES, past its absolute expiry, its member disabled, or
   * its tenant suspended by an operator (from the next request, like the tenant's API keys).
   */
  async lookup(t: string, touch = true): Promise<SessionRecord | undefined> {
    const h = hashKey(t);
    const idle = `${this.d.idleMinutes} minutes`;
    const [r] = touch
      ? await this.d.sql`
          with s as (
            update portal_sessions set last_seen_at = now()
             where token_hash = ${h} and ended_at is null and expires_at > now() and last_seen_at > now() - ${idle}::interval
            returning member_id, tenant_id, stage, csrf_token, expires_at)
          select m.*, s.stage, s.csrf_token, s.expires_at, t.name as tenant_name, coalesce(ps.require_totp, false) as require_totp
            from s join portal_members m on m.id = s.member_id join tenants t on t.id = s.tenant_id
            left join portal_settings ps on ps.tenant_id = s.tenant_id
           where m.status = 'active' and t.suspended_at is null`
      : await this.d.sql`
          select m.*, s.stage, s.csrf_token, s.expires_at, t.name as tenant_name, coalesce(ps.require_totp, false) as require_totp
            from portal_sessions s join portal_members m on m.id = s.member_id join tenants t on t.id = s.tenant_id
            left join portal_settings ps on ps.tenant_id = s.tenant_id
           where s.token_hash = ${h} and s.ended_at is null and s.expires_at > now() and s.last_seen_at > now() - ${idle}::interval and m.status = 'active' and t.suspended_at is null`;
    if (!r) return undefined;
    return {
      member: memberView(r),
      tenantId: r.tenant_id as string,
      tenantName: r.tenant_name as string,
      stage: r.stage as 'totp' | 'full',
      csrfToken: r.csrf_token as string,
      totpSetupOwed: (r.require_totp as boolean) && !r.totp_enabled_at,
      expiresAt: r.expires_at as Date,
    };
  }

  async signOut(t: string, a: Actor): Promise<void> {
    await this.d.sql.begin(async (tx) => {
      await tx`update portal_sessions set ended_at = now() where token_hash = ${hashKey(t)} and ended_at is null`;
      await this.auditIn(tx, a, 'session.sign_out', null, {});
    });
  }

  /** The principal a full session gives: the member's scopes in the mode the portal shows. */
  static principal(s: SessionRecord, livemode: boolean): Principal {
    return Object.freeze({
      tenantId: s.tenantId,
      livemode,
      keyId: s.member.id,
      scopes: Object.freeze(s.member.scopes),
      member: Object.freeze({ id: s.member.id, email: s.member.email, role: s.member.role }),
    });
  }

  // ---- the member's own account -------------------------------------------------------------

  async me(memberId: string): Promise<MemberView> {
    const [m] = await this.d.sql`select * from portal_members where id = ${memberId}`;
    if (!m) throw new ApiError('portal.member_not_found');
    return memberView(m);
  }

  async updateMe(a: Actor, body: { name?: string; locale?: 'es' | 'en' }): Promise<MemberView> {
    return this.d.sql.begin(async (tx) => {
      const [m] = await tx`
        update portal_members set name = coalesce(${body.name ?? null}, name), locale = coalesce(${body.locale ?? null}, locale)
         where id = ${a.memberId} returning *`;
      await this.auditIn(tx, a, 'member.profile_updated', a.memberId, { locale: body.locale ?? null });
      return memberView(m);
    });
  }

  /** A new TOTP secret for the member's app (not on until a code from it is confirmed). */
  async totpBegin(a: Actor): Promise<{ secret: string; otpauth_url: string }> {
    const [m] = await this.d.sql`select * from portal_members where id = ${a.memberId}`;
    if (m.totp_enabled_at) throw new ApiError('portal.totp_conflict');
    const secret = new Secret({ size: 20 });
    const totp = new TOTP({ issuer: 'Orquesta', label: m.email as string, secret, period: TOTP_PERIOD, digits: 6, algorithm: 'SHA1' });
    await this.d.sql`update portal_members set totp_secret_sealed = ${this.d.secrets.seal(secret.base32, `portal:totp:${a.memberId}`)}, totp_last_step = null where id = ${a.memberId}`;
    return { secret: secret.base32, otpauth_url: totp.toString() };
  }

  async totpConfirm(a: Actor, code: string): Promise<MemberView> {
    const [m] = await this.d.sql`select * from portal_members where id = ${a.memberId}`;
    if (m.totp_enabled_at) throw new ApiError('portal.totp_conflict');
    await this.checkTotp(m, code);
    return this.d.sql.begin(async (tx) => {
      const [r] = await tx`update portal_members set totp_enabled_at = now() where id = ${a.memberId} returning *`;
      await this.auditIn(tx, a, 'member.totp_enabled', a.memberId, {});
      return memberView(r);
    });
  }

  async changePassword(a: Actor, current: string, next: string): Promise<void> {
    const [m] = await this.d.sql`select password_hash from portal_members where id = ${a.memberId}`;
    if (!(await verifyPassword(current, (m?.password_hash as string | null) ?? DUMMY_PASSWORD_RECORD))) throw new ApiError('portal.sign_in_invalid', 'The current password is wrong.');
    const h = await hashPassword(next);
    await this.d.sql.begin(async (tx) => {
      await tx`update portal_members set password_hash = ${h} where id = ${a.memberId}`;
      await this.auditIn(tx, a, 'member.password_changed', a.memberId, {});
    });
  }

  // ---- password reset through the notification outbox ---------------------------------------

  /** Always answers the same (no account discovery); a known active member gets a link by email. */
  async requestReset(email: string, resetBaseUrl: string): Promise<void> {
    const [m] = await this.d.sql`select id, tenant_id, email from portal_members where lower(email) = ${norm(email)} and status = 'active'`;
    if (!m) return;
    const t = token();
    await this.d.sql.begin(async (tx) => {
      await tx`insert into portal_password_resets (token_hash, member_id, expires_at) values (${hashKey(t)}, ${m.id as string}, ${new Date(Date.now() + RESET_TTL_MS)})`;
      await this.notify(tx, m.email as string, 'portal_password_reset', { token: t, url: `${resetBaseUrl}#/reset/${t}` });
      await this.auditIn(tx, { tenantId: m.tenant_id as string, memberId: m.id as string, email: m.email as string }, 'member.password_reset_requested', m.id as string, {});
    });
  }

  /** A new password from a reset link; every session of the member ends. */
  async confirmReset(t: string, password: string): Promise<void> {
    const h = await hashPassword(password);
    await this.d.sql.begin(async (tx) => {
      const [r] = await tx`
        update portal_password_resets set used_at = now()
         where token_hash = ${hashKey(t)} and used_at is null and expires_at > now() returning member_id`;
      if (!r) throw new ApiError('portal.reset_not_found');
      const [m] = await tx`update portal_members set password_hash = ${h} where id = ${r.member_id as string} returning id, tenant_id, email`;
      await tx`update portal_sessions set ended_at = now() where member_id = ${m.id as string} and ended_at is null`;
      await this.auditIn(tx, { tenantId: m.tenant_id as string, memberId: m.id as string, email: m.email as string }, 'member.password_reset', m.id as string, {});
    });
  }

  private async notify(tx: Db, email: string, template: string, payload: Record<string, unknown>) {
    await tx`
      insert into notification_outbox (id, channel, recipient, template, payload_sealed)
      values (${randomUUID()}, 'email', ${email}, ${template}, ${this.d.secrets.seal(JSON.stringify(payload), `notification:${email}`)})`;
  }

  // ---- the team ------------------------------------------------------------------------------

  async team(tenantId: string) {
    const members = await this.d.sql`select * from portal_members where tenant_id = ${tenantId} order by created_at, id`;
    const invitations = await this.d.sql`
      select id, email, role, expires_at, created_at from portal_invitations
       where tenant_id = ${tenantId} and accepted_at is null and revoked_at is null and expires_at > now() order by created_at desc`;
    const [settings] = await this.d.sql`select require_totp from portal_settings where tenant_id = ${tenantId}`;
    return {
      object: 'portal_team' as const,
      require_totp: (settings?.require_totp as boolean | undefined) ?? false,
      members: members.map(memberView),
      invitations: invitations.map((i) => ({
        id: i.id as string, object: 'portal_invitation' as const, email: i.email as string, role: i.role as string,
        expires_at: (i.expires_at as Date).toISOString(), created_at: (i.created_at as Date).toISOString(),
      })),
    };
  }

  async invite(a: Actor, body: { email: string; role: Role }, acceptBaseUrl: string) {
    const email = norm(body.email);
    const [taken] = await this.d.sql`select 1 from portal_members where lower(email) = ${email}`;
    if (taken) throw new ApiError('portal.member_conflict');
    const t = token();
    const id = randomUUID();
    return this.d.sql.begin(async (tx) => {
      const [tenant] = await tx`select name from tenants where id = ${a.tenantId}`;
      const [i] = await tx`
        insert into portal_invitations (id, tenant_id, email, role, token_hash, invited_by, expires_at)
        values (${id}, ${a.tenantId}, ${email}, ${body.role}, ${hashKey(t)}, ${a.memberId}, ${new Date(Date.now() + INVITATION_TTL_MS)})
        returning id, email, role, expires_at, created_at`;
      await this.notify(tx, email, 'portal_invitation', { token: t, url: `${acceptBaseUrl}#/invitation/${t}`, tenant_name: tenant.name, role: body.role, invited_by: a.email });
      await this.auditIn(tx, a, 'team.invited', id, { email, role: body.role });
      return { id: i.id as string, object: 'portal_invitation' as const, email: i.email as string, role: i.role as string, expires_at: (i.expires_at as Date).toISOString(), created_at: (i.created_at as Date).toISOString() };
    });
  }

  async revokeInvitation(a: Actor, id: string) {
    await this.d.sql.begin(async (tx) => {
      const r = await tx`update portal_invitations set revoked_at = now() where id = ${id} and tenant_id = ${a.tenantId} and accepted_at is null and revoked_at is null returning id`;
      if (!r.length) throw new ApiError('portal.invitation_not_found');
      await this.auditIn(tx, a, 'team.invitation_revoked', id, {});
    });
  }

  /** The invited person chooses a password; the account is created and signed in. */
  async acceptInvitation(t: string, body: { name: string; password: string }, ip: string): Promise<IssuedSession> {
    const h = await hashPassword(body.password);
    return this.d.sql.begin(async (tx) => {
      const [i] = await tx`
        update portal_invitations set accepted_at = now()
         where token_hash = ${hashKey(t)} and accepted_at is null and revoked_at is null and expires_at > now()
        returning id, tenant_id, email, role`;
      if (!i) throw new ApiError('portal.invitation_not_found');
      const [m] = await tx`
        insert into portal_members (id, tenant_id, email, name, role, password_hash)
        values (${randomUUID()}, ${i.tenant_id as string}, ${i.email as string}, ${body.name}, ${i.role as string}, ${h})
        on conflict do nothing returning *`;
      if (!m) throw new ApiError('portal.member_conflict');
      await this.auditIn(tx, { tenantId: m.tenant_id as string, memberId: m.id as string, email: m.email as string, ip }, 'team.invitation_accepted', i.id as string, { role: i.role });
      return this.issue(tx, m, 'full');
    });
  }

  /** Role, extra scopes, status. Only an owner makes, changes or disables an owner; the team keeps one active owner. */
  async updateMember(a: Actor, id: string, body: { role?: Role; extra_scopes?: string[]; status?: 'active' | 'disabled' }, actorRole: string): Promise<MemberView> {
    return this.d.sql.begin(async (tx) => {
      const [m] = await tx`select * from portal_members where id = ${id} and tenant_id = ${a.tenantId} for update`;
      if (!m) throw new ApiError('portal.member_not_found');
      if ((m.role === 'owner' || body.role === 'owner') && actorRole !== 'owner') throw new ApiError('insufficient_scope', 'Only an owner can make, change or disable an owner.');
      const role = body.role ?? (m.role as Role);
      const status = body.status ?? (m.status as string);
      if (!isRole(role)) throw new ApiError('portal.invalid_body', `Unknown role ${role}.`);
      if (m.role === 'owner' && (role !== 'owner' || status !== 'active')) {
        const [o] = await tx`select count(*)::int as n from portal_members where tenant_id = ${a.tenantId} and role = 'owner' and status = 'active' and id <> ${id}`;
        if ((o.n as number) === 0) throw new ApiError('portal.last_owner_conflict');
      }
      const [r] = await tx`
        update portal_members set role = ${role}, status = ${status}, extra_scopes = ${body.extra_scopes ?? (m.extra_scopes as string[])}
         where id = ${id} returning *`;
      if (status !== 'active') await tx`update portal_sessions set ended_at = now() where member_id = ${id} and ended_at is null`;
      await this.auditIn(tx, a, 'team.member_updated', id, { role, status, extra_scopes: r.extra_scopes });
      return memberView(r);
    });
  }

  /** The team-wide second-factor rule: only an owner changes what the team must use to sign in. */
  async setRequireTotp(a: Actor, require: boolean, actorRole: string) {
    if (actorRole !== 'owner') throw new ApiError('insufficient_scope', 'Only an owner can change what the team must use to sign in.');
    await this.d.sql.begin(async (tx) => {
      await tx`
        insert into portal_settings (tenant_id, require_totp) values (${a.tenantId}, ${require})
        on conflict (tenant_id) do update set require_totp = excluded.require_totp, updated_at = now()`;
      await this.auditIn(tx, a, 'team.require_totp', null, { require_totp: require });
    });
    return this.team(a.tenantId);
  }

  // ---- API keys issued in the portal ------------------------------------------------------------

  async keys(tenantId: string, livemode: boolean) {
    const all = await listApiKeys(this.d, tenantId);
    return { ...all, data: all.data.filter((k) => k.livemode === livemode) };
  }

  /** A new key of the mode shown; its secret is in this answer only. */
  async issueKey(a: Actor, livemode: boolean, scopes: string[]) {
    const k = await createApiKey(this.d, a.tenantId, livemode, scopes);
    await this.audit(a, 'api_key.created', k.id, { livemode, scopes });
    return k;
  }

  /** A new key with the same mode and scopes; the old one is revoked at once (every process). */
  async rollKey(a: Actor, keyId: string) {
    const [old] = await this.d.sql`select livemode, scopes from api_keys where id = ${keyId} and tenant_id = ${a.tenantId} and revoked_at is null`;
    if (!old) throw new ApiError('portal.api_key_not_found');
    const k = await createApiKey(this.d, a.tenantId, old.livemode as boolean, old.scopes as string[]);
    await revokeApiKey({ sql: this.d.sql, keys: { announceRevocation: this.d.announceRevocation } }, a.tenantId, keyId);
    await this.audit(a, 'api_key.rolled', keyId, { new_key: k.id });
    return k;
  }

  async revokeKey(a: Actor, keyId: string) {
    try {
      const k = await revokeApiKey({ sql: this.d.sql, keys: { announceRevocation: this.d.announceRevocation } }, a.tenantId, keyId);
      await this.audit(a, 'api_key.revoked', keyId, {});
      return k;
    } catch (e) {
      if ((e as ApiError).code === 'api_key.not_found') throw new ApiError('portal.api_key_not_found');
      throw e;
    }
  }

  // ---- audit log ---------------------------------------------------------------------------------

  async audit(a: Actor, action: string, target: string | null, detail: Record<string, unknown>): Promise<void> {
    await this.auditIn(this.d.sql, a, action, target, detail);
  }

  private async auditIn(db: Db, a: Actor, action: string, target: string | null, detail: Record<string, unknown>): Promise<void> {
    await db`
      insert into portal_audit (tenant_id, member_id, actor_email, action, target, detail, ip)
      values (${a.tenantId}, ${a.memberId}, ${a.email}, ${action}, ${target}, ${this.d.sql.json(detail as never)}, ${a.ip ?? null})`;
  }

  async auditLog(tenantId: string, q: { limit?: number; before?: number }) {
    const limit = Math.min(q.limit ?? 50, 200);
    const rows = await this.d.sql`
      select * from portal_audit where tenant_id = ${tenantId} ${q.before ? this.d.sql`and id < ${q.before}` : this.d.sql``}
       order by id desc limit ${limit + 1}`;
    return {
      object: 'list' as const,
      has_more: rows.length > limit,
      data: rows.slice(0, limit).map((r) => ({
        id: Number(r.id), object: 'portal_audit_entry' as const, member_id: (r.member_id as string | null) ?? null, actor_email: r.actor_email as string,
        action: r.action as string, target: (r.target as string | null) ?? null, detail: r.detail as Record<string, unknown>, ip: (r.ip as string | null) ?? null,
        created_at: (r.created_at as Date).toISOString(),
      })),
    };
  }

  /** Constant-time comparison of the CSRF header with the session's token. */
  static csrfMatches(given: string | undefined, expected: string): boolean {
    if (!given) return false;
    const a = Buffer.from(given);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

/** Inside signup verification's transaction: the signup's person becomes the tenant's owner (same scrypt record). */
export async function createOwnerIn(tx: Db, tenantId: string, email: string, name: string, passwordHash: string): Promise<void> {
  await tx`
    insert into portal_members (id, tenant_id, email, name, role, password_hash)
    values (${randomUUID()}, ${tenantId}, ${email}, ${name}, 'owner', ${passwordHash})
    on conflict do nothing`;
}
