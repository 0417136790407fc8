// The PAC conformance suite: the same scenarios against every implementation of connectors/pac
// (the sim and the Finkok adapter on its local fake). Run by test/connectors/pac.test.ts.
import type { Test } from 'tap';
import { construirIngreso, sellarComprobante, type Receptor } from '../../formats/cfdi/comprobante.js';
import { cadenaOriginal } from '../../formats/cfdi/cadena.js';
import { leerTimbre, verificarTimbre, buscarTimbre } from '../../formats/cfdi/tfd.js';
import { attr, parseXml } from '../../formats/cfdi/xml.js';
import { testCsd } from '../../connectors/pac/test-csd.js';
import { pacErrorCode, type Pac, type PacCredentials } from '../../connectors/pac/pac.js';
import { xsdValidate } from '../helpers/sat.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

export interface Subject {
  pac: Pac;
  livemode: boolean;
  credentials: PacCredentials;
}

const csd = testCsd(false);
const emisor = { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimenFiscal: '601' };
let folio = 0;

export function sealed(nombre = 'ESCUELA KEMPER URGATE'): string {
  const receptor: Receptor = { rfc: 'EKU9003173C9', nombre, cp: '26015', regimenFiscal: '601', usoCfdi: 'G03' };
  const b = construirIngreso({ serie: 'C', folio: String(++folio), fecha: new Date(), lugarExpedicion: '06600', emisor, receptor, metodoPago: 'PUE', formaPago: '04', conceptos: [{ descripcion: 'Prueba de conformidad', importeMinor: 11600 + folio }] });
  return sellarComprobante(b.doc, csd).xml;
}

async function fault(p: Promise<unknown>): Promise<OutcomeUnknown | unknown> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return e;
  }
}

export function pacConformance(t: Test, make: () => Promise<Subject>) {
  const stampReq = (s: Subject, xml: string) => ({ xml, livemode: s.livemode, credentials: s.credentials, now: new Date() });

  t.test('stamps: TFD 1.1 with the UUID, SelloCFD = Sello, valid against SAT XSDs, cadena unchanged', async (t) => {
    const s = await make();
    const xml = sealed();
    const out = await s.pac.stamp(stampReq(s, xml));
    t.equal(out.kind, 'stamped');
    if (out.kind !== 'stamped') return;
    const doc = parseXml(out.xml);
    t.equal(leerTimbre(doc)?.uuid, out.uuid);
    t.equal(leerTimbre(doc)?.selloCfd, attr(doc, 'Sello'));
    t.ok(verificarTimbre(buscarTimbre(doc)!, csd.certificado), 'SelloSAT verifies');
    t.equal(cadenaOriginal(doc), cadenaOriginal(parseXml(xml)), 'the stamp did not change the cadena');
    t.ok(xsdValidate(out.xml).ok, 'XSD valid');
  });

  t.test('the same sealed CFDI twice gives the same stamp', async (t) => {
    const s = await make();
    const xml = sealed();
    const a = await s.pac.stamp(stampReq(s, xml));
    const b = await s.pac.stamp(stampReq(s, xml));
    t.equal(a.kind, 'stamped');
    t.equal(b.kind, 'stamped');
    if (a.kind === 'stamped' && b.kind === 'stamped') t.equal(b.uuid, a.uuid);
  });

  t.test('status: a stamped CFDI gives its stamp, one never stamped gives not_stamped', async (t) => {
    const s = await make();
    const xml = sealed();
    const a = await s.pac.stamp(stampReq(s, xml));
    const st = await s.pac.status(stampReq(s, xml));
    t.equal(st.kind, 'stamped');
    if (a.kind === 'stamped' && st.kind === 'stamped') t.equal(st.uuid, a.uuid, 'the same stamp');
    const never = await s.pac.status(stampReq(s, sealed('PAC ERROR')));
    t.equal(never.kind, 'not_stamped');
  });

  t.test('receptor "PAC ERROR" is rejected: invoice.pac_error', async (t) => {
    const s = await make();
    const out = await s.pac.stamp(stampReq(s, sealed('PAC ERROR')));
    t.equal(out.kind, 'rejected');
    if (out.kind === 'rejected') {
      t.equal(pacErrorCode(out), 'invoice.pac_error');
      t.ok(out.message.length > 0, 'carries the PAC message');
    }
  });

  t.test('a Sello that does not match the cadena is rejected', async (t) => {
    const s = await make();
    const out = await s.pac.stamp(stampReq(s, sealed().replace('Descripcion="Prueba de conformidad"', 'Descripcion="Otra cosa"')));
    t.equal(out.kind, 'rejected');
  });

  for (const [nombre, code] of [
    ['PAC UNREACHABLE', 'invoice.pac_unreachable'],
    ['PAC BAD RESPONSE', 'invoice.pac_bad_response'],
    ['PAC NO UUID', 'invoice.pac_no_uuid'],
  ] as const) {
    t.test(`receptor "${nombre}": ${code}`, async (t) => {
      const s = await make();
      const e = await fault(s.pac.stamp(stampReq(s, sealed(nombre))));
      t.ok(e instanceof OutcomeUnknown, 'throws OutcomeUnknown');
      if (e instanceof OutcomeUnknown) t.equal(pacErrorCode(e), code);
    });
  }

  t.test('cancel: motivo 02 cancels; 01 needs FolioSustitucion; an unknown UUID is refused', async (t) => {
    const s = await make();
    const a = await s.pac.stamp(stampReq(s, sealed()));
    const b = await s.pac.stamp(stampReq(s, sealed()));
    if (a.kind !== 'stamped' || b.kind !== 'stamped') throw new Error('stamp failed');
    const base = { rfcEmisor: emisor.rfc, livemode: s.livemode, credentials: s.credentials, csd, now: new Date() };
    const c1 = await s.pac.cancel({ ...base, uuid: a.uuid, motivo: '01' });
    t.equal(c1.kind, 'rejected', 'motivo 01 without folio_sustitucion');
    const c2 = await s.pac.cancel({ ...base, uuid: a.uuid, motivo: '01', folioSustitucion: b.uuid });
    t.equal(c2.kind, 'cancelled', 'motivo 01 with folio_sustitucion');
    const c3 = await s.pac.cancel({ ...base, uuid: b.uuid, motivo: '02' });
    t.equal(c3.kind, 'cancelled', 'motivo 02');
    if (c3.kind === 'cancelled') t.ok(c3.acuse, 'carries the acuse');
    const c4 = await s.pac.cancel({ ...base, uuid: '00000000-0000-4000-8000-000000000000', motivo: '02' });
    t.equal(c4.kind, 'rejected', 'unknown UUID');
  });
}
