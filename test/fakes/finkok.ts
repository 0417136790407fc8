// A local fake of Finkok's SOAP services answering as its documentation and public clients show
// (shared format notes on Finkok): `stamp` inserts a TimbreFiscalDigital with a fresh UUID and echoes
// UUID, Fecha, SatSeal, NoCertificadoSAT, CodEstatus; the same pre-CFDI again gets incidence 307
// without the stamp, which `stamped` returns; errors come as Incidencias inside a normal answer.
// `cancel_signature` checks the signed request's XML-DSig and answers one Folio with its EstatusUUID.
//
// Triggers (receptor Nombre, the same words as the sim PAC so the conformance suite runs one set of
// scenarios; plus Finkok-only ones):
//   PAC ERROR         → Incidencia 302 "Sello mal formado o inválido"
//   PAC UNREACHABLE   → no answer until the client gives up (timeout)
//   PAC BAD RESPONSE  → a non-XML body with HTTP 200
//   PAC NO UUID       → a stampResult with neither UUID, xml nor Incidencias
//   FINKOK 500        → HTTP 500 with an HTML error page
//   FINKOK 708        → Incidencia 708 "No se pudo conectar al SAT"
//   FINKOK FAULT      → HTTP 500 with a SOAP Fault
//   FINKOK DOUBLE     → the same Incidencia twice (observed by phpcfdi), code 301
// Wrong username/password → Incidencia 300. A Sello that does not verify → Incidencia 302.
// Cancel: unknown UUID → 205; motivo 01 without FolioSustitucion → 207; a UUID stamped for a receptor
// named "CANCELA CON ACEPTACION" → 201 "En proceso"; a bad signature → CodEstatus 711 without folios;
// a UUID whose cancellation was already requested → 202.
// As Finkok behaves (issue 28.5; phpcfdi/finkok docs/issues/StampServiceDobleEstampado.md): for `lagMs`
// after a stamp, `stamped` answers 603 and a repeated `stamp` 307 without the XML. `get_sat_status`
// answers SAT's Estado / EsCancelable / EstatusCancelacion; `decideCancellation` plays the receptor.
import { createServer, type Server } from 'node:http';
import { randomUUID, createHash, createVerify, X509Certificate } from 'node:crypto';
import { cadenaOriginal } from '../../formats/cfdi/cadena.js';
import { verificarSello } from '../../formats/cfdi/csd.js';
import { fechaLocal } from '../../formats/cfdi/comprobante.js';
import { construirTimbre, insertarTimbre } from '../../formats/cfdi/tfd.js';
import { NS, attr, kid, parseXml, serialize } from '../../formats/cfdi/xml.js';
import { parseSoap, type SoapNode } from '../../connectors/pac/finkok-mapping.js';
import { testCsd } from '../../connectors/pac/test-csd.js';

const find = (n: SoapNode | undefined, name: string) => n?.children.find((c) => c.name === name);
const findDeep = (n: SoapNode, name: string): SoapNode | undefined => (n.name === name ? n : n.children.map((c) => findDeep(c, name)).find(Boolean));
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function soap(ns: string, op: string, inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><senv:Envelope xmlns:senv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:tns="${ns}" xmlns:s0="apps.services.soap.core.views"><senv:Body><tns:${op}Response><tns:${op}Result>${inner}</tns:${op}Result></tns:${op}Response></senv:Body></senv:Envelope>`;
}
const incidencia = (code: string, msg: string) =>
  `<s0:Incidencia><s0:IdIncidencia>1</s0:IdIncidencia><s0:RfcEmisor>AAA010101AAA</s0:RfcEmisor><s0:CodigoError>${code}</s0:CodigoError><s0:WorkProcessId>x</s0:WorkProcessId><s0:MensajeIncidencia>${esc(msg)}</s0:MensajeIncidencia><s0:FechaRegistro>2026-03-02T12:00:00</s0:FechaRegistro></s0:Incidencia>`;

export interface FakeFinkok {
  url: string;
  calls: { op: string; body: string }[];
  user: string;
  password: string;
  /** Milliseconds after a stamp during which Finkok does not hand it back (603 / 307 without XML). */
  lagMs: number;
  /** The receptor accepts or refuses a cancellation waiting for it. */
  decideCancellation(uuid: string, accept: boolean): void;
  close(): Promise<void>;
}

export async function startFakeFinkok(opts: { user?: string; password?: string; lagMs?: number } = {}): Promise<FakeFinkok> {
  const user = opts.user ?? 'finkok-user';
  const password = opts.password ?? 'finkok-pass';
  const state = { lagMs: opts.lagMs ?? 0 };
  const stamped = new Map<string, { uuid: string; xml: string; fecha: string; at: number }>(); // sha256(pre-CFDI) → stamp
  const cancellation = new Map<string, 'pending' | 'cancelled' | 'rejected'>(); // uuid → SAT's view
  const byUuid = new Map<string, { nombre: string }>();
  const calls: FakeFinkok['calls'] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const csd = testCsd(false);

  const stampOp = (op: string, req: SoapNode): { status: number; body: string; hang?: boolean } => {
    const ns = 'http://facturacion.finkok.com/stamp';
    const u = find(req, 'username')?.text;
    const p = find(req, 'password')?.text;
    if (u !== user || p !== password) return { status: 200, body: soap(ns, op, `<s0:xml></s0:xml><s0:Incidencias>${incidencia('300', 'Usuario y contraseña inválidos')}</s0:Incidencias>`) };
    const pre = Buffer.from(find(req, 'xml')?.text ?? '', 'base64').toString('utf8');
    let doc;
    try {
      doc = parseXml(pre);
    } catch {
      return { status: 200, body: soap(ns, op, `<s0:Incidencias>${incidencia('301', 'XML mal formado')}</s0:Incidencias>`) };
    }
    const nombre = attr(kid(doc, NS.cfdi, 'Receptor') ?? doc, 'Nombre') ?? '';
    const key = createHash('sha256').update(pre).digest('hex');
    const found = stamped.get(key);
    // Finkok holds the stamp but does not hand it back for a while (the documented lag).
    const prior = found && Date.now() - found.at >= state.lagMs ? found : undefined;
    const answer = (s: { uuid: string; xml: string; fecha: string }, cod: string) =>
      soap(ns, op, `<s0:xml>${esc(s.xml)}</s0:xml><s0:UUID>${s.uuid}</s0:UUID><s0:Fecha>${s.fecha}</s0:Fecha><s0:CodEstatus>${cod}</s0:CodEstatus><s0:SatSeal>x</s0:SatSeal><s0:NoCertificadoSAT>${csd.noCertificado}</s0:NoCertificadoSAT>`);
    if (op === 'stamped') {
      if (!prior) return { status: 200, body: soap(ns, op, `<s0:Incidencias>${incidencia('603', 'El CFDI no contiene un timbre previo')}</s0:Incidencias>`) };
      return { status: 200, body: answer(prior, 'Comprobante timbrado previamente') };
    }
    if (nombre === 'PAC UNREACHABLE') return { status: 0, body: '', hang: true };
    if (nombre === 'PAC BAD RESPONSE') return { status: 200, body: '<html><body>Gateway says hello' };
    if (nombre === 'PAC NO UUID') return { status: 200, body: soap(ns, op, '<s0:CodEstatus>Comprobante timbrado satisfactoriamente</s0:CodEstatus>') };
    if (nombre === 'FINKOK 500') return { status: 500, body: '<html><h1>500 Internal Server Error</h1></html>' };
    if (nombre === 'FINKOK FAULT') return { status: 500, body: '<?xml version="1.0"?><senv:Envelope xmlns:senv="http://schemas.xmlsoap.org/soap/envelope/"><senv:Body><senv:Fault><faultcode>senv:Server</faultcode><faultstring>Internal error</faultstring></senv:Fault></senv:Body></senv:Envelope>' };
    if (nombre === 'FINKOK 708') return { status: 200, body: soap(ns, op, `<s0:xml></s0:xml><s0:Incidencias>${incidencia('708', 'No se pudo conectar al SAT')}</s0:Incidencias>`) };
    if (nombre === 'FINKOK DOUBLE') return { status: 200, body: soap(ns, op, `<s0:Incidencias>${incidencia('301', 'XML mal formado')}${incidencia('301', 'XML mal formado')}</s0:Incidencias>`) };
    if (nombre === 'PAC ERROR') return { status: 200, body: soap(ns, op, `<s0:xml></s0:xml><s0:Incidencias>${incidencia('302', 'Sello mal formado o inválido')}</s0:Incidencias>`) };
    if (!verificarSello(cadenaOriginal(doc), attr(doc, 'Sello') ?? '', attr(doc, 'Certificado') ?? '')) {
      return { status: 200, body: soap(ns, op, `<s0:Incidencias>${incidencia('302', 'Sello mal formado o inválido')}</s0:Incidencias>`) };
    }
    if (found) return { status: 200, body: soap(ns, op, `<s0:xml></s0:xml><s0:UUID></s0:UUID><s0:Incidencias>${incidencia('307', 'El CFDI contiene un timbre previo')}</s0:Incidencias>`) };
    const uuid = randomUUID().toUpperCase();
    const fecha = fechaLocal(new Date());
    const tfd = construirTimbre({ uuid, fechaTimbrado: fecha, rfcProvCertif: 'CVD110412TF6', selloCfd: attr(doc, 'Sello')!, noCertificadoSat: csd.noCertificado }, csd.privateKey);
    insertarTimbre(doc, tfd);
    const s = { uuid, xml: serialize(doc), fecha, at: Date.now() };
    stamped.set(key, s);
    byUuid.set(uuid, { nombre });
    return { status: 200, body: answer(s, 'Comprobante timbrado satisfactoriamente') };
  };

  const cancelOp = (req: SoapNode): { status: number; body: string } => {
    const ns = 'http://facturacion.finkok.com/cancel';
    const out = (inner: string) => ({ status: 200, body: soap(ns, 'cancel_signature', inner) });
    if (find(req, 'username')?.text !== user || find(req, 'password')?.text !== password) return out('<s0:CodEstatus>300</s0:CodEstatus>');
    const signed = Buffer.from(find(req, 'xml')?.text ?? '', 'base64').toString('utf8');
    // Verify the enveloped signature as SAT would: digest of the request without Signature, then SignedInfo.
    const body = signed.replace(/^<\?xml[^>]*>\s*/, '');
    const sigStart = body.indexOf('<Signature ');
    const unsigned = body.slice(0, sigStart) + '</Cancelacion>';
    const si = /<SignedInfo>.*<\/SignedInfo>/s.exec(body)?.[0] ?? '';
    const digest = /<DigestValue>([^<]*)</.exec(si)?.[1];
    const sigValue = /<SignatureValue>([^<]*)</.exec(body)?.[1] ?? '';
    const certB64 = /<X509Certificate>([^<]*)</.exec(body)?.[1] ?? '';
    let okSig = false;
    try {
      const cert = new X509Certificate(Buffer.from(certB64, 'base64'));
      okSig =
        createHash('sha1').update(unsigned).digest('base64') === digest &&
        createVerify('RSA-SHA1').update(si.replace('<SignedInfo>', '<SignedInfo xmlns="http://www.w3.org/2000/09/xmldsig#">')).verify(cert.publicKey, sigValue, 'base64');
    } catch {
      okSig = false;
    }
    if (!okSig) return out('<s0:CodEstatus>711</s0:CodEstatus><s0:Acuse></s0:Acuse>');
    const folio = /<Folio( [^>]*)>/.exec(body)?.[1] ?? '';
    const a = (n: string) => new RegExp(`${n}="([^"]*)"`).exec(folio)?.[1];
    const uuid = a('UUID') ?? '';
    const motivo = a('Motivo');
    const known = byUuid.get(uuid);
    let estatus = '201';
    let cancelacion = 'Cancelado sin aceptación';
    if (!known) [estatus, cancelacion] = ['205', ''];
    else if (motivo === '01' && !a('FolioSustitucion')) [estatus, cancelacion] = ['207', ''];
    else if (cancellation.get(uuid) === 'pending' || cancellation.get(uuid) === 'cancelled') [estatus, cancelacion] = ['202', cancellation.get(uuid) === 'cancelled' ? 'Cancelado sin aceptación' : 'En proceso'];
    else if (known.nombre === 'CANCELA CON ACEPTACION') cancelacion = 'En proceso';
    if (estatus === '201') cancellation.set(uuid, cancelacion === 'En proceso' ? 'pending' : 'cancelled');
    const acuse = estatus === '201' ? esc(`<Acuse Fecha="${fechaLocal(new Date())}" RfcEmisor="AAA010101AAA"><Folios><UUID>${uuid}</UUID><EstatusUUID>201</EstatusUUID></Folios></Acuse>`) : '';
    return out(`<s0:Folios><s0:Folio><s0:EstatusCancelacion>${cancelacion}</s0:EstatusCancelacion><s0:EstatusUUID>${estatus}</s0:EstatusUUID><s0:UUID>${uuid}</s0:UUID></s0:Folio></s0:Folios><s0:Acuse>${acuse}</s0:Acuse><s0:Fecha>2026-03-02 12:00:00.000000</s0:Fecha><s0:RfcEmisor>AAA010101AAA</s0:RfcEmisor>`);
  };

  const satStatusOp = (req: SoapNode): { status: number; body: string } => {
    const ns = 'http://facturacion.finkok.com/cancel';
    const out = (estado: string, cancelable: string, est: string) => ({
      status: 200,
      body: soap(ns, 'get_sat_status', `<s0:sat><s0:CodigoEstatus>S - Comprobante obtenido satisfactoriamente.</s0:CodigoEstatus><s0:Estado>${estado}</s0:Estado><s0:EsCancelable>${cancelable}</s0:EsCancelable><s0:EstatusCancelacion>${est}</s0:EstatusCancelacion></s0:sat>`),
    });
    if (find(req, 'username')?.text !== user || find(req, 'password')?.text !== password) return { status: 200, body: soap(ns, 'get_sat_status', '<s0:error>Invalid username or password</s0:error>') };
    const uuid = (find(req, 'uuid')?.text ?? '').toUpperCase();
    const known = byUuid.get(uuid);
    if (!known) return out('No Encontrado', '', '');
    const c = cancellation.get(uuid);
    const cancelable = known.nombre === 'CANCELA CON ACEPTACION' ? 'Cancelable con aceptación' : 'Cancelable sin aceptación';
    if (c === 'cancelled') return out('Cancelado', cancelable, 'Cancelado con aceptación');
    if (c === 'pending') return out('Vigente', cancelable, 'En proceso');
    if (c === 'rejected') return out('Vigente', cancelable, 'Solicitud rechazada');
    return out('Vigente', cancelable, '');
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let envelope: SoapNode;
      try {
        envelope = parseSoap(text);
      } catch {
        res.writeHead(400).end('bad request');
        return;
      }
      const bodyNode = find(envelope, 'Body');
      const opNode = bodyNode?.children[0];
      const op = opNode?.name ?? '';
      calls.push({ op, body: text });
      let r: { status: number; body: string; hang?: boolean };
      if (req.url === '/servicios/soap/stamp' && (op === 'stamp' || op === 'stamped')) r = stampOp(op, opNode!);
      else if (req.url === '/servicios/soap/cancel' && op === 'cancel_signature') r = cancelOp(opNode!);
      else if (req.url === '/servicios/soap/cancel' && op === 'get_sat_status') r = satStatusOp(opNode!);
      else r = { status: 404, body: 'not found' };
      if (r.hang) {
        hanging.add(res);
        return;
      }
      res.writeHead(r.status, { 'content-type': 'text/xml; charset=utf-8' }).end(r.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address() as import('node:net').AddressInfo;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    calls,
    user,
    password,
    get lagMs() {
      return state.lagMs;
    },
    set lagMs(v: number) {
      state.lagMs = v;
    },
    decideCancellation(uuid: string, accept: boolean) {
      if (cancellation.get(uuid.toUpperCase()) === 'pending') cancellation.set(uuid.toUpperCase(), accept ? 'cancelled' : 'rejected');
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const h of hanging) h.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export { findDeep };
