// The fiscal profile (PUT/GET /v1/fiscal_profile, decisions.md §6), one per tenant and mode: the
// issuer's data, the PAC and its credentials, the optional CSD upload and the self-invoice portal.
// The PAC password and the CSD key are stored encrypted and never read back through the API.
import type { Sql } from '../kernel/db.js';
import type { Logger } from '../kernel/log.js';
import { ApiError } from '../kernel/errors.js';
import { tenantOffsetMsSql } from '../kernel/clock.js';
import type { Principal } from '../kernel/principal.js';
import { REGIMENES } from '../formats/cfdi/catalogs.js';
import { CsdError, loadCsd, readCertificate, type Csd } from '../formats/cfdi/csd.js';
import { checkRfc, normalizarNombre } from '../formats/cfdi/receptor.js';
import { isTestCertificate, testCsd } from '../connectors/pac/test-csd.js';
import type { FiscalProfileBody } from '../schemas/invoices.js';
import { open, seal } from './fiscal-secrets.js';
import type { SecretBox } from '../kernel/secret-box.js';

/** What reading and writing fiscal profiles needs: the database and the deployment's secrets box. */
export interface FiscalDeps {
  sql: Sql;
  secrets: SecretBox;
}

export interface FiscalProfileView {
  object: 'fiscal_profile';
  rfc: string;
  nombre: string;
  regimen_fiscal: string;
  cp: string;
  serie: string;
  pac_provider: string;
  pac_user?: string;
  pac_password_set: boolean;
  self_invoice_enabled: boolean;
  self_invoice_slug?: string;
  self_invoice_url?: string;
  csd?: { source: 'uploaded' | 'sat_test'; no_certificado: string; rfc: string; valid_from: string; valid_to: string };
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

type Row = Record<string, any>;

const ctx = (tenantId: string, livemode: boolean, what: string) => `${tenantId}:${livemode ? 'live' : 'test'}:${what}`;

function view(r: Row): FiscalProfileView {
  let csd: FiscalProfileView['csd'];
  if (r.csd_no_certificado) {
    csd = { source: 'uploaded', no_certificado: r.csd_no_certificado, rfc: r.rfc, valid_from: (r.csd_valid_from as Date).toISOString(), valid_to: (r.csd_valid_to as Date).toISOString() };
  } else if (!r.livemode) {
    const t = testCsd(false);
    csd = { source: 'sat_test', no_certificado: t.noCertificado, rfc: t.rfc, valid_from: t.validFrom.toISOString(), valid_to: t.validTo.toISOString() };
  }
  return {
    object: 'fiscal_profile',
    rfc: r.rfc,
    nombre: r.nombre,
    regimen_fiscal: r.regimen_fiscal,
    cp: r.cp,
    serie: r.serie,
    pac_provider: r.pac_provider,
    pac_user: r.pac_user ?? undefined,
    pac_password_set: !!r.pac_password_enc,
    self_invoice_enabled: r.self_invoice_enabled,
    self_invoice_slug: r.self_invoice_slug ?? undefined,
    self_invoice_url: r.self_invoice_slug ? `/factura/${r.self_invoice_slug}` : undefined,
    csd,
    livemode: r.livemode,
    created_at: (r.created_at as Date).toISOString(),
    updated_at: (r.updated_at as Date).toISOString(),
  };
}

const bad = (message: string) => new ApiError('fiscal_profile.invalid', message);

export async function putFiscalProfile(deps: FiscalDeps & { log: Logger }, p: Principal, body: FiscalProfileBody, now: Date): Promise<FiscalProfileView> {
  const rfc = checkRfc(body.rfc);
  if (!rfc.ok) throw bad(`rfc "${body.rfc}" is not a valid RFC: ${rfc.reason}.`);
  if (rfc.generico) throw bad(`rfc ${rfc.rfc} is a generic RFC: the issuer needs its own.`);
  const reg = REGIMENES[body.regimen_fiscal];
  if (!reg) throw bad(`regimen_fiscal "${body.regimen_fiscal}" is not a key of SAT's c_RegimenFiscal catalog.`);
  if (!reg[rfc.persona!]) throw bad(`regimen_fiscal ${body.regimen_fiscal} (${reg.descripcion}) does not apply to the RFC's kind of person (${rfc.persona}).`);
  const nombre = normalizarNombre(body.nombre);
  if (body.self_invoice_enabled && !body.self_invoice_slug) throw bad('self_invoice_enabled needs a self_invoice_slug (the address of the page /factura/{slug}).');

  let csdCols: { csd_cer: Buffer; csd_key_enc: string; csd_password_enc: string; csd_no_certificado: string; csd_valid_from: Date; csd_valid_to: Date } | undefined;
  if (body.csd) {
    let csd: Csd;
    try {
      csd = loadCsd({ cer: Buffer.from(body.csd.cer_base64, 'base64'), key: Buffer.from(body.csd.key_base64, 'base64'), password: body.csd.password });
    } catch (e) {
      throw new ApiError('invoice.csd_invalid', e instanceof CsdError ? `csd: ${e.message}.` : 'csd: the files could not be read.');
    }
    if (p.livemode && isTestCertificate(csd.certificado)) throw new ApiError('invoice.test_csd_in_live');
    if (csd.rfc !== rfc.rfc) throw new ApiError('invoice.csd_invalid', `csd: the certificate belongs to RFC ${csd.rfc}, the profile's RFC is ${rfc.rfc}.`);
    if (p.livemode && csd.validTo <= now) throw new ApiError('invoice.csd_invalid', `csd: the certificate expired on ${csd.validTo.toISOString()}.`);
    csdCols = {
      csd_cer: Buffer.from(csd.certificado, 'base64'),
      csd_key_enc: seal(deps.secrets, Buffer.from(body.csd.key_base64, 'base64'), ctx(p.tenantId, p.livemode, 'csd_key')),
      csd_password_enc: seal(deps.secrets, body.csd.password, ctx(p.tenantId, p.livemode, 'csd_password')),
      csd_no_certificado: csd.noCertificado,
      csd_valid_from: csd.validFrom,
      csd_valid_to: csd.validTo,
    };
  }
  // pac_password: omitted keeps the stored one, "" removes it.
  const pw = body.pac_password === undefined ? undefined : body.pac_password === '' ? null : seal(deps.secrets, body.pac_password, ctx(p.tenantId, p.livemode, 'pac_password'));
  const sql = deps.sql;
  try {
    // The slug's entry in the directory the public page reads (self_invoice_slugs, migration 0160:
    // unique across tenants, a reference table under Citus): a slug another tenant holds fails here
    // (23505, answered below), in the profile's transaction.
    const row = await sql.begin(async (tx) => {
      if (body.self_invoice_slug) {
        await tx`insert into self_invoice_slugs (slug, tenant_id, livemode) values (${body.self_invoice_slug}, ${p.tenantId}, ${p.livemode})
          on conflict (tenant_id, livemode) do update set slug = excluded.slug`;
      } else await tx`delete from self_invoice_slugs where tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
      const [r] = await tx`
        insert into fiscal_profiles (tenant_id, livemode, rfc, nombre, regimen_fiscal, cp, serie, pac_provider, pac_user, pac_password_enc,
          self_invoice_enabled, self_invoice_slug, csd_cer, csd_key_enc, csd_password_enc, csd_no_certificado, csd_valid_from, csd_valid_to, created_at, updated_at)
        values (${p.tenantId}, ${p.livemode}, ${rfc.rfc}, ${nombre}, ${body.regimen_fiscal}, ${body.cp}, ${body.serie ?? 'F'}, ${body.pac_provider}, ${body.pac_user ?? null}, ${pw ?? null},
          ${body.self_invoice_enabled ?? false}, ${body.self_invoice_slug ?? null}, ${csdCols?.csd_cer ?? null}, ${csdCols?.csd_key_enc ?? null}, ${csdCols?.csd_password_enc ?? null},
          ${csdCols?.csd_no_certificado ?? null}, ${csdCols?.csd_valid_from ?? null}, ${csdCols?.csd_valid_to ?? null}, ${now}, ${now})
        on conflict (tenant_id, livemode) do update set
          rfc = excluded.rfc, nombre = excluded.nombre, regimen_fiscal = excluded.regimen_fiscal, cp = excluded.cp, serie = excluded.serie,
          pac_provider = excluded.pac_provider, pac_user = excluded.pac_user,
          pac_password_enc = ${pw === undefined ? sql`fiscal_profiles.pac_password_enc` : sql`excluded.pac_password_enc`},
          self_invoice_enabled = excluded.self_invoice_enabled, self_invoice_slug = excluded.self_invoice_slug,
          csd_cer = ${csdCols ? sql`excluded.csd_cer` : sql`fiscal_profiles.csd_cer`},
          csd_key_enc = ${csdCols ? sql`excluded.csd_key_enc` : sql`fiscal_profiles.csd_key_enc`},
          csd_password_enc = ${csdCols ? sql`excluded.csd_password_enc` : sql`fiscal_profiles.csd_password_enc`},
          csd_no_certificado = ${csdCols ? sql`excluded.csd_no_certificado` : sql`fiscal_profiles.csd_no_certificado`},
          csd_valid_from = ${csdCols ? sql`excluded.csd_valid_from` : sql`fiscal_profiles.csd_valid_from`},
          csd_valid_to = ${csdCols ? sql`excluded.csd_valid_to` : sql`fiscal_profiles.csd_valid_to`},
          updated_at = excluded.updated_at
        returning *`;
      return r;
    });
    // A profile whose RFC changed keeps no CSD of another RFC.
    if (row.csd_no_certificado && !csdCols && row.csd_cer) {
      const cert = loadCertRfc(row.csd_cer as Buffer);
      if (cert !== row.rfc) {
        const [cleared] = await sql`update fiscal_profiles set csd_cer = null, csd_key_enc = null, csd_password_enc = null, csd_no_certificado = null, csd_valid_from = null, csd_valid_to = null
          where tenant_id = ${p.tenantId} and livemode = ${p.livemode} returning *`;
        return view(cleared);
      }
    }
    // Never the password nor the key: only what identifies the change.
    deps.log.info('fiscal profile set', { tenant_id: p.tenantId, livemode: p.livemode, rfc: row.rfc, pac_provider: row.pac_provider, csd_uploaded: !!csdCols, pac_password_changed: pw !== undefined });
    return view(row);
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw new ApiError('fiscal_profile.slug_conflict', `self_invoice_slug "${body.self_invoice_slug}" is taken; choose another.`);
    throw e;
  }
}

const loadCertRfc = (der: Buffer) => readCertificate(der).rfc;

export async function getFiscalProfile(deps: { sql: Sql }, p: Principal): Promise<FiscalProfileView> {
  const [row] = await deps.sql`select * from fiscal_profiles where tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!row) throw new ApiError('invoice.fiscal_profile_missing', 'No fiscal profile for this key\'s mode: PUT /v1/fiscal_profile first.');
  return view(row);
}

/** What stamping needs: the issuer, its CSD (decrypted), the PAC and its credentials. */
export interface Issuer {
  tenantId: string;
  livemode: boolean;
  rfc: string;
  nombre: string;
  regimenFiscal: string;
  cp: string;
  serie: string;
  pacProvider: string;
  pacUser?: string;
  pacPassword?: string;
  /** null in live mode when no CSD was uploaded. */
  csd: Csd | null;
  csdSource: 'uploaded' | 'sat_test' | null;
  selfInvoiceEnabled: boolean;
  selfInvoiceSlug?: string;
  version: string;
}

const issuerCache = new Map<string, { version: string; issuer: Issuer }>();

async function toIssuer(d: FiscalDeps, r: Row): Promise<Issuer> {
  const version = (r.updated_at as Date).toISOString();
  const key = `${r.tenant_id}:${r.livemode}`;
  const hit = issuerCache.get(key);
  if (hit && hit.version === version) return hit.issuer;
  let csd: Csd | null = null;
  let csdSource: Issuer['csdSource'] = null;
  if (r.csd_cer && r.csd_key_enc) {
    csd = loadCsd({
      cer: r.csd_cer as Buffer,
      key: open(d.secrets, r.csd_key_enc, ctx(r.tenant_id, r.livemode, 'csd_key')),
      password: (open(d.secrets, r.csd_password_enc, ctx(r.tenant_id, r.livemode, 'csd_password'))).toString('utf8'),
    });
    csdSource = 'uploaded';
  } else if (!r.livemode) {
    csd = testCsd(false);
    csdSource = 'sat_test';
  }
  const issuer: Issuer = {
    tenantId: r.tenant_id,
    livemode: r.livemode,
    rfc: r.rfc,
    nombre: r.nombre,
    regimenFiscal: r.regimen_fiscal,
    cp: r.cp,
    serie: r.serie,
    pacProvider: r.pac_provider,
    pacUser: r.pac_user ?? undefined,
    pacPassword: r.pac_password_enc ? (open(d.secrets, r.pac_password_enc, ctx(r.tenant_id, r.livemode, 'pac_password'))).toString('utf8') : undefined,
    csd,
    csdSource,
    selfInvoiceEnabled: r.self_invoice_enabled,
    selfInvoiceSlug: r.self_invoice_slug ?? undefined,
    version,
  };
  issuerCache.set(key, { version, issuer });
  return issuer;
}

/**
 * The issuer of a tenant and mode with its tenant clock's offset (ms, 0 in live mode: kernel/clock.ts),
 * read in one statement: what every CFDI request reads first (actors/invoices.ts `context`).
 */
export async function issuerFor(d: FiscalDeps, tenantId: string, livemode: boolean): Promise<{ issuer: Issuer; clockOffsetMs: number } | null> {
  const sql = d.sql;
  const [row] = await sql`select f.*, ${tenantOffsetMsSql(sql, 'f.tenant_id', 'f.livemode')} as clock_offset_ms from fiscal_profiles f where f.tenant_id = ${tenantId} and f.livemode = ${livemode}`;
  return row ? { issuer: await toIssuer(d, row), clockOffsetMs: livemode ? 0 : Number(row.clock_offset_ms) } : null;
}

/** The enabled self-invoice portal of a slug, or null (unknown or disabled: the same answer). */
export async function issuerBySlug(d: FiscalDeps, slug: string): Promise<Issuer | null> {
  const sql = d.sql;
  // The directory first (a reference table: no fan-out under Citus), then the tenant's own row.
  const [dir] = await sql`select tenant_id, livemode from self_invoice_slugs where slug = ${slug}`;
  if (!dir) return null;
  const [row] = await sql`select * from fiscal_profiles where tenant_id = ${dir.tenant_id} and livemode = ${dir.livemode} and self_invoice_slug = ${slug} and self_invoice_enabled`;
  return row ? toIssuer(d, row) : null;
}
