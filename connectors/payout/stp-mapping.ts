// STP (Sistema de Transferencias y Pagos) payouts: the pure half of the adapter. Request builders,
// the cadena original that is signed, and exhaustive maps of STP's answers, states and callbacks;
// no I/O here (connectors/payout/stp.ts does the HTTP). Everything below follows STP's REST API as
// documented ("RegistraOrden (Dispersión)", "Firmas Electrónicas") and as STP's own answers show in
// cuenca-mx/stpmex-python's recorded cassettes; shared/formats/stp.md summarises it with a
// confidence mark per claim. The parts that are not confirmed are kept in the tables marked [U]
// below, in this file only.
import { createSign, type KeyObject } from 'node:crypto';
import { RailCallbackError, type CallbackNotice, type PayoutOrder, type RailState, type ConciliatedOrder } from './rail.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

/** Any 18-digit run (a CLABE) in a text from STP, masked like every CLABE we show (bank code and last four). */
export const maskAccounts = (text: string) => text.replace(/\d{18}/g, (d) => `${d.slice(0, 3)}${'*'.repeat(11)}${d.slice(14)}`);

/** STP's own SPEI participant code: `institucionOperante` of every order it sends. */
export const STP_INSTITUTION = '90646';

/** The 34 fields of an order, in the order of the cadena original (STP "Firmas Electrónicas"). [C] */
export const ORDEN_FIELDS = [
  'institucionContraparte', 'empresa', 'fechaOperacion', 'folioOrigen', 'claveRastreo', 'institucionOperante', 'monto', 'tipoPago',
  'tipoCuentaOrdenante', 'nombreOrdenante', 'cuentaOrdenante', 'rfcCurpOrdenante', 'tipoCuentaBeneficiario', 'nombreBeneficiario',
  'cuentaBeneficiario', 'rfcCurpBeneficiario', 'emailBeneficiario', 'tipoCuentaBeneficiario2', 'nombreBeneficiario2', 'cuentaBeneficiario2',
  'rfcCurpBeneficiario2', 'conceptoPago', 'conceptoPago2', 'claveCatUsuario1', 'claveCatUsuario2', 'clavePago', 'referenciaCobranza',
  'referenciaNumerica', 'tipoOperacion', 'topologia', 'usuario', 'medioEntrega', 'prioridad', 'iva',
] as const;
export type OrdenField = (typeof ORDEN_FIELDS)[number];

/** An order as sent: the non-empty fields (money as a JSON number of pesos). */
export type Orden = Partial<Record<OrdenField, string | number>>;

/** A tenant's STP credentials (stored sealed; decrypted only to build a request). */
export interface StpCredentials {
  /** Company code STP assigned (`empresa`). */
  empresa: string;
  /** The tenant's own account at STP that pays (cuentaOrdenante, a CLABE): money leaves the merchant's account. */
  cuentaOrdenante: string;
  nombreOrdenante?: string;
  rfcCurpOrdenante?: string;
  /** The company's private key (PEM, usually encrypted) and its passphrase. */
  privateKeyPem: string;
  passphrase: string;
}

/** STP cuts names and concepts at 39 characters and wants plain ASCII (accents folded). [C: client practice] */
export function stpText(value: string, max = 39): string {
  return value.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/\s+/g, ' ').trim().slice(0, max).trim();
}

/** Pesos with two decimals as the cadena writes them (`1.20`). */
export const montoCadena = (amountMinor: number) => `${Math.trunc(amountMinor / 100)}.${String(amountMinor % 100).padStart(2, '0')}`;

/**
 * The order STP's registraOrden takes for a payout. Values follow STP's client defaults: payment
 * type 1, CLABE accounts (40), delivery medium 3, topology T, normal priority 0, `ND` when the
 * beneficiary's RFC is unknown. `fechaOperacion` is not sent: STP assigns the operation day.
 */
export function buildOrden(order: PayoutOrder, creds: Pick<StpCredentials, 'empresa' | 'cuentaOrdenante' | 'nombreOrdenante' | 'rfcCurpOrdenante'>, institucionContraparte: string): Orden {
  const o: Orden = {
    institucionContraparte,
    empresa: creds.empresa,
    claveRastreo: order.trackingKey,
    institucionOperante: STP_INSTITUTION,
    monto: order.amountMinor / 100,
    tipoPago: 1,
    tipoCuentaOrdenante: 40,
    nombreOrdenante: creds.nombreOrdenante ? stpText(creds.nombreOrdenante) : undefined,
    cuentaOrdenante: creds.cuentaOrdenante,
    rfcCurpOrdenante: creds.rfcCurpOrdenante,
    tipoCuentaBeneficiario: 40,
    nombreBeneficiario: stpText(order.beneficiaryName),
    cuentaBeneficiario: order.clabe,
    rfcCurpBeneficiario: order.beneficiaryRfc ? order.beneficiaryRfc.trim().toUpperCase() : 'ND',
    conceptoPago: stpText(order.concepto),
    referenciaNumerica: order.numericReference,
    topologia: 'T',
    medioEntrega: 3,
    prioridad: 0,
  };
  for (const k of Object.keys(o) as OrdenField[]) if (o[k] === undefined || o[k] === '') delete o[k];
  return o;
}

/**
 * The cadena original of an order: `||` + the 34 values in ORDEN_FIELDS order joined by `|` + `||`.
 * A missing field is an empty position; zero is written `0`; `monto` (and `iva`) with two decimals.
 */
export function cadenaOrden(o: Orden): string {
  const value = (f: OrdenField) => {
    const v = o[f];
    if (v === undefined || v === null) return '';
    if (f === 'monto' || f === 'iva') return montoCadena(Math.round(Number(v) * 100));
    return String(v).trim();
  };
  return `||${ORDEN_FIELDS.map(value).join('|')}||`;
}

/** The cadena of a query by tracking key (consOrdEnvRastreo): empresa, date, key and institution in their positions. [C] */
export function cadenaConsulta(empresa: string, fechaOperacion: string | undefined, claveRastreo: string, institucionOperante: string): string {
  return `|||${empresa}|${fechaOperacion ?? ''}||${claveRastreo}|${institucionOperante}${'|'.repeat(30)}`;
}

/** RSA PKCS#1 v1.5 with SHA-256 over the UTF-8 cadena, standard base64: the `firma`. [C] */
export const sign = (key: KeyObject, cadena: string) => createSign('RSA-SHA256').update(cadena, 'utf8').sign(key, 'base64');

/** The JSON body of registraOrden: the order, its `firma` and `empresa`. */
export function registraBody(o: Orden, key: KeyObject): Record<string, unknown> {
  return { ...o, firma: sign(key, cadenaOrden(o)) };
}

export function consultaBody(empresa: string, claveRastreo: string, fechaOperacion: string | undefined, key: KeyObject): Record<string, unknown> {
  const body: Record<string, unknown> = { empresa, claveRastreo, institucionOperante: Number(STP_INSTITUTION) };
  if (fechaOperacion) body.fechaOperacion = fechaOperacion;
  body.firma = sign(key, cadenaConsulta(empresa, fechaOperacion, claveRastreo, STP_INSTITUTION));
  return body;
}

/**
 * consOrdenesFech (the day's orders, for conciliation): `{empresa, estado: "E" (sent) | "R" (received),
 * fechaOperacion?, firma}`, signed with the query cadena without tracking key or institution [C,
 * cuenca-mx/stpmex-python `_consulta_fecha` / `_firma_consulta`].
 */
export function consultaFechaBody(empresa: string, fechaOperacion: string | undefined, key: KeyObject): Record<string, unknown> {
  const body: Record<string, unknown> = { empresa, estado: 'E' };
  if (fechaOperacion) body.fechaOperacion = fechaOperacion;
  body.firma = sign(key, cadenaConsulta(empresa, fechaOperacion, '', ''));
  return body;
}

/** One sent order of a day as consOrdenesFech lists it (rail.ts). */
export type { ConciliatedOrder };

/** consOrdenesFech's answer: `{resultado: {id: 1, lst: [...]}}`, or id -100 "No se encontraron ordenes" (none) [C]. */
export function mapConciliacion(body: unknown): ConciliatedOrder[] {
  const r = (body as { resultado?: { id?: unknown; lst?: unknown; descripcionError?: unknown } } | null)?.resultado;
  if (!r || typeof r !== 'object' || typeof r.id !== 'number') throw new OutcomeUnknown('bad_response', 'STP consOrdenesFech: no resultado.id in the answer');
  if (r.id === -100) return [];
  if (r.id <= 0 || !Array.isArray(r.lst)) throw new OutcomeUnknown('bad_response', `STP consOrdenesFech answered id ${r.id}${typeof r.descripcionError === 'string' ? ` "${maskAccounts(r.descripcionError)}"` : ''}`);
  const out: ConciliatedOrder[] = [];
  for (const o of r.lst as Array<Record<string, unknown>>) {
    if (!o || typeof o.claveRastreo !== 'string' || typeof o.estado !== 'string') continue;
    const ref = o.idEF ?? o.id ?? o.claveRastreo;
    out.push({ trackingKey: o.claveRastreo, state: stateOfEstado(o.estado, String(ref), o.causaDevolucion) });
  }
  return out;
}

// ---- answers of registraOrden ------------------------------------------------------------------

export type RegistraResult =
  | { kind: 'accepted'; providerRef: string }
  /** STP refused the order: nothing was registered, no money moves. */
  | { kind: 'rejected'; code: string; reason: string }
  /** The tracking key was used already (the order exists): ask its status. */
  | { kind: 'duplicate' }
  /** STP could not tell (its upstream did not answer): the outcome is unknown. */
  | { kind: 'unknown'; reason: string };

/**
 * STP's documented rejections of registraOrden, by `id` and the pattern of `descripcionError`
 * (shared/formats/stp.md §4; the messages are STP's, as its answers in cuenca-mx's cassettes and
 * client show). Our code names what the payout's `failure_reason` is about.
 */
const REGISTRA_ERRORS: ReadonlyArray<{ id: number; pattern: RegExp; result: RegistraResult | ((d: string) => RegistraResult) }> = [
  { id: 0, pattern: /^No se recibi[oó] respuesta del servicio/i, result: (d) => ({ kind: 'unknown', reason: `STP: ${d}` }) },
  { id: 0, pattern: /^Error validando la firma/i, result: (d) => ({ kind: 'rejected', code: 'stp_invalid_signature', reason: `STP refused the order's signature (${d}): check the tenant's STP private key and passphrase.` }) },
  { id: 0, pattern: /^El campo .+ es obligatorio/i, result: (d) => ({ kind: 'rejected', code: 'stp_missing_field', reason: `STP refused the order: ${d}.` }) },
  // [T, one client] seen when the empresa or account is not set up at STP.
  { id: 0, pattern: /^No entity found for query/i, result: (d) => ({ kind: 'rejected', code: 'stp_configuration', reason: `STP refused the order (${d}): check the tenant's STP empresa and account.` }) },
  { id: -1, pattern: /clave de rastreo .+ ya fue utilizada/i, result: { kind: 'duplicate' } },
  // [T, one source] duplicate order.
  { id: -2, pattern: /.*/, result: { kind: 'duplicate' } },
  // [T, one source] invalid empresa.
  { id: -6, pattern: /.*/, result: (d) => ({ kind: 'rejected', code: 'stp_invalid_company', reason: `STP does not know the company (empresa): ${d}` }) },
  { id: -7, pattern: /La cuenta .+ no existe/i, result: (d) => ({ kind: 'rejected', code: 'account_not_found', reason: `The beneficiary account does not exist (STP: ${d}).` }) },
  { id: -9, pattern: /La Institucion \d+ no es valida/i, result: (d) => ({ kind: 'rejected', code: 'invalid_institution', reason: `The beneficiary's bank does not take SPEI transfers (STP: ${d}).` }) },
  { id: -11, pattern: /El tipo de cuenta \d+ es invalido/i, result: (d) => ({ kind: 'rejected', code: 'invalid_account_type', reason: `STP: ${d}.` }) },
  { id: -20, pattern: /El monto .+ no es v[aá]lido/i, result: (d) => ({ kind: 'rejected', code: 'invalid_amount', reason: `STP refused the amount: ${d}.` }) },
  { id: -22, pattern: /no coincide para la institucion operante/i, result: (d) => ({ kind: 'rejected', code: 'clabe_bank_mismatch', reason: `The CLABE's bank does not match the institution (STP: ${d}).` }) },
  { id: -24, pattern: /MISMA_CUENTA/i, result: (d) => ({ kind: 'rejected', code: 'same_account', reason: `The beneficiary is the paying account itself (STP: ${d}).` }) },
  { id: -34, pattern: /Clave rastreo invalida/i, result: (d) => ({ kind: 'rejected', code: 'invalid_tracking_key', reason: `STP: ${d}.` }) },
  { id: -200, pattern: /Se rechaza por PLD/i, result: (d) => ({ kind: 'rejected', code: 'aml_rejected', reason: `STP refused the order under its anti-money-laundering rules (PLD): ${d}` }) },
];

/** Maps registraOrden's answer (HTTP 200, JSON). Throws OutcomeUnknown('bad_response') on anything STP does not document. */
export function mapRegistra(body: unknown): RegistraResult {
  const r = (body as { resultado?: { id?: unknown; descripcionError?: unknown } } | null)?.resultado;
  if (!r || typeof r !== 'object' || typeof r.id !== 'number' || !Number.isInteger(r.id)) throw new OutcomeUnknown('bad_response', `STP registraOrden: no resultado.id in the answer`);
  // STP's texts name accounts in full ("La cuenta 0726… no existe"): masked before they go anywhere.
  const d = typeof r.descripcionError === 'string' ? maskAccounts(r.descripcionError) : undefined;
  if (r.id > 0 && d === undefined) return { kind: 'accepted', providerRef: String(r.id) };
  for (const e of REGISTRA_ERRORS) {
    if (e.id === r.id && d !== undefined && e.pattern.test(d)) return typeof e.result === 'function' ? e.result(d) : e.result;
  }
  throw new OutcomeUnknown('bad_response', `STP registraOrden answered id ${r.id} with ${d === undefined ? 'no description' : `"${d}"`}, which its documentation does not show`);
}

// ---- order states (consOrdEnvRastreo, callbacks) -----------------------------------------------

/** What an order's `estado` means for a payout. [C] codes of stpmex `types.Estado`. */
type Meaning = 'in_flight' | 'paid' | 'failed' | 'returned' | 'not_an_outgoing_order';
export const ESTADOS: Readonly<Record<string, { name: string; meaning: Meaning }>> = {
  C: { name: 'capturada', meaning: 'in_flight' },
  PL: { name: 'pendiente liberar', meaning: 'in_flight' },
  L: { name: 'liberada', meaning: 'in_flight' },
  PA: { name: 'pendiente autorizar', meaning: 'in_flight' },
  A: { name: 'autorizada', meaning: 'in_flight' },
  E: { name: 'enviada', meaning: 'in_flight' },
  EA: { name: 'enviada adapter', meaning: 'in_flight' },
  XC: { name: 'por cancelar', meaning: 'in_flight' },
  LQ: { name: 'liquidada', meaning: 'paid' },
  // A devolution under way: the money is still with the beneficiary until it is `devuelta`.
  XD: { name: 'por devolver', meaning: 'paid' },
  XR: { name: 'por retornar', meaning: 'paid' },
  D: { name: 'devuelta', meaning: 'returned' },
  RE: { name: 'retornada', meaning: 'returned' },
  CN: { name: 'cancelada', meaning: 'failed' },
  CL: { name: 'cancelada local', meaning: 'failed' },
  CR: { name: 'cancelada rechazada', meaning: 'failed' },
  RL: { name: 'rechazada local', meaning: 'failed' },
  CA: { name: 'cancelada adapter', meaning: 'failed' },
  RA: { name: 'rechazada adapter', meaning: 'failed' },
  RB: { name: 'rechazada Banxico', meaning: 'failed' },
  EL: { name: 'eliminada', meaning: 'failed' },
  // States of incoming orders, transfers between own accounts and confirmations: never of an order we sent.
  R: { name: 'recibida', meaning: 'not_an_outgoing_order' },
  TL: { name: 'traspaso liberado', meaning: 'not_an_outgoing_order' },
  TC: { name: 'traspaso capturado', meaning: 'not_an_outgoing_order' },
  TA: { name: 'traspaso autorizado', meaning: 'not_an_outgoing_order' },
  TLQ: { name: 'traspaso liquidado', meaning: 'not_an_outgoing_order' },
  TCL: { name: 'traspaso cancelado', meaning: 'not_an_outgoing_order' },
  CXO: { name: 'por enviar confirmación', meaning: 'not_an_outgoing_order' },
  CCE: { name: 'confirmación enviada', meaning: 'not_an_outgoing_order' },
  CCO: { name: 'confirmada', meaning: 'not_an_outgoing_order' },
  CCR: { name: 'confirmación rechazada', meaning: 'not_an_outgoing_order' },
  EP: { name: 'exportación POA', meaning: 'not_an_outgoing_order' },
  EC: { name: 'exportación CEP', meaning: 'not_an_outgoing_order' },
};

/**
 * The state of an order from its `estado` code. Throws OutcomeUnknown('bad_response') on a code STP does not
 * document, or on one that is not a state of an outgoing order (never `default: in_flight`).
 */
export function stateOfEstado(estado: string, providerRef: string, causaDevolucion?: unknown): RailState {
  const e = ESTADOS[estado];
  if (!e) throw new OutcomeUnknown('bad_response', `STP order ${providerRef} has estado "${estado}", which STP does not document`);
  switch (e.meaning) {
    case 'in_flight':
      return { state: 'in_flight', providerRef };
    case 'paid':
      return { state: 'paid', providerRef };
    case 'returned': {
      const causa = causaDevolucion === undefined || causaDevolucion === null || causaDevolucion === '' ? undefined : String(causaDevolucion);
      return { state: 'returned', providerRef, code: 'returned_by_beneficiary_bank', reason: `The beneficiary's bank returned the transfer (STP estado ${estado} ${e.name}${causa ? `, causa de devolución ${causa}` : ''}).` };
    }
    case 'failed':
      return { state: 'failed', providerRef, code: 'stp_cancelled', reason: `STP did not complete the transfer (estado ${estado}: ${e.name}).` };
    case 'not_an_outgoing_order':
      throw new OutcomeUnknown('bad_response', `STP order ${providerRef} has estado ${estado} (${e.name}), which is not a state of an order sent`);
  }
}

/**
 * Maps consOrdEnvRastreo's answer: `{resultado: {id: 1, ordenPago: {...}}}` when found; id -100
 * ("No se encontró la orden …") when STP has no such order (null); anything else throws.
 */
export function mapConsulta(body: unknown): RailState | null {
  const r = (body as { resultado?: { id?: unknown; descripcionError?: unknown; ordenPago?: Record<string, unknown> } } | null)?.resultado;
  if (!r || typeof r !== 'object' || typeof r.id !== 'number') throw new OutcomeUnknown('bad_response', 'STP consOrdEnvRastreo: no resultado.id in the answer');
  if (r.id === -100) return null;
  const o = r.ordenPago;
  if (r.id > 0 && o && typeof o === 'object' && typeof o.estado === 'string') {
    const ref = o.idEF ?? o.id;
    if (typeof ref !== 'number' && typeof ref !== 'string') throw new OutcomeUnknown('bad_response', 'STP consOrdEnvRastreo: the order has no idEF');
    return stateOfEstado(o.estado, String(ref), o.causaDevolucion);
  }
  const d = typeof r.descripcionError === 'string' ? ` "${maskAccounts(r.descripcionError)}"` : '';
  throw new OutcomeUnknown('bad_response', `STP consOrdEnvRastreo answered id ${r.id}${d}, which its documentation does not show`);
}

// ---- callbacks ---------------------------------------------------------------------------------

/**
 * The `estado` of STP's status callback ("cambio de estado"): the legacy webhook's words LIQUIDACION /
 * DEVOLUCION / CANCELACION [C, cuenca-mx/speid], the query's codes (LQ, D, CN… [C, stpmex types]),
 * and the words third-party integrations of the current format read (Liquidada, Devuelta, Cancelada,
 * Rechazada) [U]. The callback is only a hint: the adapter asks STP (consOrdEnvRastreo) before
 * anything changes, so the words never decide a state; a callback with a word outside this table is
 * refused (STP sends it again) and the order is found by the day's conciliation (consOrdenesFech)
 * all the same (issue 28.6).
 */
const CALLBACK_WORDS: Readonly<Record<string, RailState['state']>> = {
  LIQUIDACION: 'paid',
  LIQUIDADA: 'paid',
  DEVOLUCION: 'returned',
  DEVUELTA: 'returned',
  CANCELACION: 'failed',
  CANCELADA: 'failed',
  RECHAZADA: 'failed',
};

/** Reads a status callback: `{id, empresa, folioOrigen, estado, causaDevolucion, tsLiquidacion}` (legacy: `{id, Estado, Detalle}`). */
export function parseStpCallback(raw: string): CallbackNotice {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new RailCallbackError('STP callback: the body is not JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new RailCallbackError('STP callback: the body is not an object');
  const b = body as Record<string, unknown>;
  const id = b.id;
  if ((typeof id !== 'number' || !Number.isInteger(id) || id <= 0) && !(typeof id === 'string' && /^\d+$/.test(id))) throw new RailCallbackError('STP callback: no order id');
  const estadoRaw = b.estado ?? b.Estado;
  if (typeof estadoRaw !== 'string' || !estadoRaw.trim()) throw new RailCallbackError('STP callback: no estado');
  const word = estadoRaw.trim().toUpperCase().normalize('NFKD').replace(/[^\x20-\x7e]/g, '');
  let claimed = CALLBACK_WORDS[word];
  if (!claimed) {
    const e = ESTADOS[estadoRaw.trim()];
    if (!e || e.meaning === 'not_an_outgoing_order') throw new RailCallbackError(`STP callback: unknown estado "${estadoRaw}"`);
    claimed = e.meaning;
  }
  const folio = typeof b.folioOrigen === 'string' && b.folioOrigen ? b.folioOrigen : undefined;
  return {
    providerRef: String(id),
    trackingKey: folio,
    claimed,
    account: typeof b.empresa === 'string' ? b.empresa : undefined,
  };
}

/** STP's expected acknowledgement of a callback. [T] */
export const CALLBACK_ACK = { mensaje: 'recibido' } as const;
