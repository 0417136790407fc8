// The Sello computed on libuv's thread pool (issue 26: invoices off the event loop) is the same as
// the synchronous one: RSASSA-PKCS1-v1_5 over SHA-256 is deterministic, so the documents are equal
// byte for byte, and the async verification accepts it and refuses a tampered cadena.
import t from 'tap';
import { construirIngreso, sellarComprobante, sellarComprobanteAsync } from '../formats/cfdi/comprobante.js';
import { construirTimbre, construirTimbreAsync } from '../formats/cfdi/tfd.js';
import { verificarSello, verificarSelloAsync } from '../formats/cfdi/csd.js';
import { serialize } from '../formats/cfdi/xml.js';
import { testCsd } from '../connectors/pac/test-csd.js';

const csd = testCsd(false);
const build = (folio: string) =>
  construirIngreso({
    serie: 'F', folio, fecha: new Date('2026-11-27T10:00:00Z'), lugarExpedicion: '06600',
    emisor: { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimenFiscal: '601' },
    receptor: { rfc: 'EKU9003173C9', nombre: 'ESCUELA KEMPER URGATE', cp: '26015', regimenFiscal: '601', usoCfdi: 'G03' },
    metodoPago: 'PUE', formaPago: '04', conceptos: [{ descripcion: 'Venta', importeMinor: 11600 }, { descripcion: 'Envío', importeMinor: 9999 }],
  });

t.test('sellarComprobanteAsync = sellarComprobante, byte for byte', async (t) => {
  for (const folio of ['1', '2', '300']) {
    const sync = sellarComprobante(build(folio).doc, csd);
    const async = await sellarComprobanteAsync(build(folio).doc, csd);
    t.equal(async.sello, sync.sello, `folio ${folio}: same Sello`);
    t.equal(async.xml, sync.xml, `folio ${folio}: same document`);
    t.equal(async.cadena, sync.cadena);
    t.ok(await verificarSelloAsync(async.cadena, async.sello, csd.certificado), 'verifies (async)');
    t.ok(verificarSello(async.cadena, async.sello, csd.certificado), 'verifies (sync)');
    t.notOk(await verificarSelloAsync(async.cadena + 'x', async.sello, csd.certificado), 'a tampered cadena is refused');
    t.notOk(await verificarSelloAsync(async.cadena, 'not base64 !', csd.certificado), 'a malformed Sello is refused');
  }
});

t.test('construirTimbreAsync = construirTimbre', async (t) => {
  const input = { uuid: 'e0a1b2c3-d4e5-4f60-8a9b-0c1d2e3f4a5b', fechaTimbrado: '2026-11-27T04:00:00', rfcProvCertif: 'SPR190613I52', selloCfd: 'abc=', noCertificadoSat: csd.noCertificado };
  t.equal(serialize(await construirTimbreAsync(input, csd.privateKey)), serialize(construirTimbre(input, csd.privateKey)));
});
