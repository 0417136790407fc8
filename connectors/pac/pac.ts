// The PAC (Proveedor Autorizado de Certificación) interface: stamping (timbrado) and cancellation
// of CFDI 4.0. One file per provider implements it; `sim` is the reference (test mode), `finkok` the
// real adapter (live mode only). Rejections are values; a call whose outcome is unknown or whose
// answer cannot be read throws OutcomeUnknown (kernel/outbound.ts).
import type { KeyObject } from 'node:crypto';
import { OutcomeUnknown } from '../../kernel/outbound.js';

export interface PacCredentials {
  user?: string;
  password?: string;
}

export interface StampRequest {
  /** The sealed CFDI (Sello, NoCertificado, Certificado present), without TimbreFiscalDigital. */
  xml: string;
  livemode: boolean;
  credentials: PacCredentials;
  /** The time the PAC would see (the tenant's clock in test mode). */
  now: Date;
  /** Who sends (the tenant and mode): a PAC account. The sim keys its book of stamps on it. */
  account?: string;
  /**
   * When this sealed CFDI was first sent (its pending row's creation: the outbound mark). A PAC
   * whose lookup lags right after a stamp (Finkok's 603) answers "ask again later" (OutcomeUnknown
   * `no_uuid`, `invoice.pac_no_uuid`) inside the lag instead of waiting under the entity's lock. Absent: the PAC waits.
   */
  sentAt?: Date;
}

export interface Stamped {
  kind: 'stamped';
  uuid: string;
  /** The stamped CFDI: the sealed document with the tfd:TimbreFiscalDigital inside cfdi:Complemento. */
  xml: string;
  fechaTimbrado: string;
  noCertificadoSat: string;
  selloSat: string;
  rfcProvCertif: string;
}

/** The PAC (or SAT through it) refused the document or the credentials: `invoice.pac_error`. */
export interface Rejected {
  kind: 'rejected';
  /** The provider's own code (Finkok incidence code, e.g. "302"; the sim's codes are documented in sim.ts). */
  code: string;
  message: string;
}

export type StampOutcome = Stamped | Rejected;

export interface CancelRequest {
  uuid: string;
  rfcEmisor: string;
  /** SAT motive 01..04. */
  motivo: '01' | '02' | '03' | '04';
  /** The replacing CFDI's UUID; only with motivo 01. */
  folioSustitucion?: string;
  livemode: boolean;
  credentials: PacCredentials;
  /** The issuer's CSD: SAT's cancellation request is signed by the issuer. */
  csd: { certificado: string; privateKey: KeyObject; noCertificado: string };
  now: Date;
  /**
   * The stamped CFDI being cancelled. A real PAC needs only the UUID (SAT holds the document) and
   * ignores it; the sim reads from it what SAT knows of the document (TipoDeComprobante, Total,
   * global or not, FechaTimbrado, the receptor), so its answer does not depend on which process stamped.
   */
  xml?: string;
}

export type CancelOutcome =
  /** SAT cancelled it (cancellation without the receptor's acceptance). */
  | { kind: 'cancelled'; acuse?: string }
  /** SAT received the request; the receptor must accept it (or the term must pass). */
  | { kind: 'pending'; acuse?: string }
  | Rejected;


export interface Pac {
  readonly key: string;
  /** Whether this provider stamps for real (live) or is a simulator (test). */
  readonly live: boolean;
  stamp(req: StampRequest): Promise<StampOutcome>;
  /**
   * What the PAC knows of a sealed CFDI sent before whose answer was lost: its stamp, or
   * `not_stamped` when the PAC never stamped it (so a new document may be issued instead).
   */
  status(req: StampRequest): Promise<Stamped | { kind: 'not_stamped' }>;
  cancel(req: CancelRequest): Promise<CancelOutcome>;
  /**
   * SAT's view of a stamped CFDI whose cancellation waits (`cancel_pending`): `cancelled`, still
   * `pending` (the receptor has not answered), `rejected` (the receptor refused: the CFDI stays
   * valid) or `not_found` (SAT does not list it yet). Optional: a PAC without it is never asked.
   */
  cancelStatus?(req: CancelStatusRequest): Promise<CancelStatus>;
}

export interface CancelStatusRequest {
  uuid: string;
  rfcEmisor: string;
  rfcReceptor: string;
  /** The CFDI's Total as written in it (SAT's query compares it). */
  total: string;
  livemode: boolean;
  credentials: PacCredentials;
  /** The stamped CFDI (as in CancelRequest.xml: ignored by a real PAC, read by the sim). */
  xml?: string;
}

export type CancelStatus =
  | { kind: 'cancelled'; estado: string }
  | { kind: 'pending'; estado: string; estatusCancelacion: string }
  | { kind: 'rejected'; estado: string; estatusCancelacion: string }
  | { kind: 'active'; estado: string; esCancelable: string }
  | { kind: 'not_found' };

/** The API error code of a PAC failure (service-spec "Tips, reports, invoices"). */
export function pacErrorCode(f: Rejected | OutcomeUnknown): 'invoice.pac_error' | 'invoice.pac_unreachable' | 'invoice.pac_bad_response' | 'invoice.pac_no_uuid' {
  if (!(f instanceof OutcomeUnknown)) return 'invoice.pac_error';
  switch (f.reason) {
    case 'unreachable':
    case 'provider_error':
    case 'not_ready':
      return 'invoice.pac_unreachable';
    case 'bad_response':
      return 'invoice.pac_bad_response';
    case 'no_uuid':
      return 'invoice.pac_no_uuid';
  }
}
