// A local fake of STP's REST API for the `stp` payout rail's tests. It answers as STP's
// documentation and STP's recorded answers show (shared/formats/stp.md; cuenca-mx/stpmex-python
// cassettes): registraOrden checks the signature over the rebuilt cadena, the mandatory fields,
// the company, the tracking key (format and one use per operation day), the CLABE's bank against
// `institucionContraparte`, the amount, unknown and same accounts; consOrdEnvRastreo finds orders
// by tracking key and day. It can also answer each documented error on demand, fail at the
// transport (HTTP 500, no answer, a body that is not JSON), register an order and still fail (the
// case that makes a client ask before resending), move an order's state (liquidada, devuelta,
// cancelada) and post STP's status callbacks (current and legacy formats).
//
// It shares no code with the adapter's mapping: the cadena is rebuilt here from STP's field list
// so that a wrong order of fields on either side shows up as a signature error.
import { createPublicKey, createVerify, type KeyObject } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

const FIELDS =
  'institucionContraparte empresa fechaOperacion folioOrigen claveRastreo institucionOperante monto tipoPago tipoCuentaOrdenante nombreOrdenante cuentaOrdenante rfcCurpOrdenante tipoCuentaBeneficiario nombreBeneficiario cuentaBeneficiario rfcCurpBeneficiario emailBeneficiario tipoCuentaBeneficiario2 nombreBeneficiario2 cuentaBeneficiario2 rfcCurpBeneficiario2 conceptoPago conceptoPago2 claveCatUsuario1 claveCatUsuario2 clavePago referenciaCobranza referenciaNumerica tipoOperacion topologia usuario medioEntrega prioridad iva'.split(' ');

/** Fields a third-party client always sends (shared/formats/stp.md §2 notes): the fake requires them. */
const MANDATORY = ['empresa', 'claveRastreo', 'institucionContraparte', 'institucionOperante', 'monto', 'tipoPago', 'tipoCuentaOrdenante', 'cuentaOrdenante', 'tipoCuentaBeneficiario', 'nombreBeneficiario', 'cuentaBeneficiario', 'rfcCurpBeneficiario', 'conceptoPago', 'referenciaNumerica', 'firma'];

/** The fake's own small table of SPEI participants by CLABE prefix (Banxico's CEP list). */
const PARTICIPANTS: Record<string, string> = { '002': '40002', '012': '40012', '014': '40014', '021': '40021', '072': '40072', '137': '40137', '646': '90646' };

export type Fault = 'http500' | 'timeout' | 'malformed' | 'no_response' | 'register_then_500' | 'register_then_timeout' | 'forbidden';

export interface FakeOrder {
  id: number;
  fechaOperacion: string;
  body: Record<string, unknown>;
  estado: string;
  causaDevolucion?: number;
}

const cadena = (b: Record<string, unknown>) =>
  `||${FIELDS.map((f) => {
    const v = b[f];
    if (v === undefined || v === null) return '';
    if (f === 'monto' || f === 'iva') return Number(v).toFixed(2);
    return String(v).trim();
  }).join('|')}||`;

export class FakeStp {
  readonly orders = new Map<string, FakeOrder>();
  /** registraOrden calls per tracking key (every call, accepted or not). */
  readonly registraCalls = new Map<string, number>();
  readonly consultaCalls: Array<{ claveRastreo: string; fechaOperacion?: string }> = [];
  /** Beneficiary accounts STP answers -7 for. */
  readonly nonexistentAccounts = new Set<string>();
  /** The state new orders take: `LQ` (settled at once) or `E` (sent; settle() later). */
  initialEstado = 'LQ';
  /** STP's current operation day. */
  fecha: string;
  /** Every call answered as STP's gateway answers a caller outside its allow-list (no VPN, IP not registered): 403 HTML. */
  forbidden = false;
  readonly conciliaCalls: Array<{ fechaOperacion?: string }> = [];
  private faults: Fault[] = [];
  private rejections: Array<{ id: number; descripcionError: string }> = [];
  private server: Server;
  private sockets = new Set<Socket>();
  private nextId = 4_100_000;
  private key: KeyObject;
  url = '';

  constructor(private opts: { empresa: string; publicKey: KeyObject | string; fecha?: string }) {
    this.key = typeof opts.publicKey === 'string' ? createPublicKey(opts.publicKey) : opts.publicKey;
    this.fecha = opts.fecha ?? new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City' }).format(new Date()).replace(/-/g, '');
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/speiws/rest`;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** The next call(s) fail this way, in order. */
  fail(...faults: Fault[]) {
    this.faults.push(...faults);
  }

  /** Refuse the queries (consOrdEnvRastreo, consOrdenesFech) with the gateway's 403 page; registraOrden still passes. */
  forbidQueries = false;
  /** The next registraOrden calls (this many) register the order, then answer 502: the answer is lost. */
  loseRegistraAnswers = 0;

  /** The next registraOrden answers this documented error. */
  reject(id: number, descripcionError: string) {
    this.rejections.push({ id, descripcionError });
  }

  orderByKey(claveRastreo: string, fecha = this.fecha) {
    return this.orders.get(`${fecha}/${claveRastreo}`);
  }

  /** Moves an order: LQ liquidada, D devuelta (with a causa), CN cancelada, … */
  settle(claveRastreo: string, estado: string, causaDevolucion?: number) {
    const o = [...this.orders.values()].find((x) => x.body.claveRastreo === claveRastreo);
    if (!o) throw new Error(`fake STP: no order ${claveRastreo}`);
    o.estado = estado;
    o.causaDevolucion = causaDevolucion;
    return o;
  }

  /** The body of STP's status callback of an order ("cambio de estado"; current or legacy format). */
  callbackBody(claveRastreo: string, format: 'current' | 'legacy' = 'current', estadoWord?: string): string {
    const o = [...this.orders.values()].find((x) => x.body.claveRastreo === claveRastreo);
    if (!o) throw new Error(`fake STP: no order ${claveRastreo}`);
    const legacyWord = ({ LQ: 'LIQUIDACION', D: 'DEVOLUCION', CN: 'CANCELACION' } as Record<string, string>)[o.estado] ?? o.estado;
    const body =
      format === 'legacy'
        ? { id: o.id, Estado: estadoWord ?? legacyWord, Detalle: `orden ${o.id}` }
        : { id: o.id, empresa: this.opts.empresa, folioOrigen: claveRastreo, estado: estadoWord ?? o.estado, causaDevolucion: o.causaDevolucion ?? '', tsLiquidacion: Date.now() };
    return JSON.stringify(body);
  }

  /** Posts STP's status callback of an order to `url`; answers the receiver's status and body. */
  notify(url: string, claveRastreo: string, format: 'current' | 'legacy' = 'current', estadoWord?: string): Promise<{ status: number; text: string }> {
    return post(url, this.callbackBody(claveRastreo, format, estadoWord));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = (req.url ?? '').replace(/^\/speiws\/rest/, '');
    const fault = this.faults.shift();
    // nginx's page, as the stpmex-python cassette test_forbidden_without_vpn recorded it.
    if (this.forbidden || fault === 'forbidden' || (this.forbidQueries && path !== '/ordenPago/registra')) return send(res, 403, '<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n<hr><center>nginx/1.16.1</center>\r\n</body>\r\n</html>\r\n', 'text/html');
    if (fault === 'http500') return send(res, 500, '<html><body>Internal Server Error</body></html>', 'text/html');
    if (fault === 'timeout') return; // never answers; the client's deadline ends it
    if (fault === 'malformed') return send(res, 200, '<resultado>not json</resultado>', 'text/plain');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return send(res, 400, 'Bad Request', 'text/plain');
    }
    if (req.method === 'PUT' && path === '/ordenPago/registra') {
      this.registraCalls.set(String(body.claveRastreo), (this.registraCalls.get(String(body.claveRastreo)) ?? 0) + 1);
      if (fault === 'no_response') return json(res, { resultado: { id: 0, descripcionError: 'No se recibió respuesta del servicio' } });
      const answer = this.registra(body);
      if (fault === 'register_then_500') return send(res, 502, 'Bad Gateway', 'text/plain');
      if (this.loseRegistraAnswers > 0) {
        this.loseRegistraAnswers--;
        return send(res, 502, 'Bad Gateway', 'text/plain');
      }
      if (fault === 'register_then_timeout') return;
      return json(res, answer);
    }
    if (req.method === 'POST' && path === '/ordenPago/consOrdEnvRastreo') return json(res, this.consulta(body));
    if (req.method === 'POST' && path === '/ordenPago/consOrdenesFech') return json(res, this.conciliacion(body));
    return send(res, 404, 'Not Found', 'text/plain');
  }

  private registra(b: Record<string, unknown>) {
    const err = (id: number, descripcionError: string) => ({ resultado: { id, descripcionError } });
    const injected = this.rejections.shift();
    if (injected) return { resultado: injected };
    for (const f of MANDATORY) if (b[f] === undefined || b[f] === null || b[f] === '') return err(0, `El campo ${f} es obligatorio`);
    if (!this.verify(cadena(b), String(b.firma))) return err(0, 'Error validando la firma');
    if (b.empresa !== this.opts.empresa) return err(-6, `La empresa ${String(b.empresa)} no es valida`);
    const clave = String(b.claveRastreo);
    if (!/^[A-Za-z0-9]{1,30}$/.test(clave)) return err(-34, 'Clave rastreo invalida');
    const fecha = typeof b.fechaOperacion === 'string' && b.fechaOperacion ? b.fechaOperacion : this.fecha;
    if (this.orders.has(`${fecha}/${clave}`)) return err(-1, `La clave de rastreo ${clave} para la fecha ${fecha} de la institucion ${String(b.institucionOperante)} ya fue utilizada`);
    const cuenta = String(b.cuentaBeneficiario);
    const inst = PARTICIPANTS[cuenta.slice(0, 3)];
    if (!inst) return err(-9, `La Institucion ${String(b.institucionContraparte)} no es valida`);
    if (inst !== String(b.institucionContraparte)) return err(-22, `La cuenta clabe ${cuenta} no coincide para la institucion operante ${String(b.institucionContraparte)}`);
    if (![40, 3, 10].includes(Number(b.tipoCuentaBeneficiario))) return err(-11, `El tipo de cuenta ${String(b.tipoCuentaBeneficiario)} es invalido`);
    if (!(Number(b.monto) > 0)) return err(-20, `El monto {${String(b.monto)}} no es válido`);
    if (this.nonexistentAccounts.has(cuenta)) return err(-7, `La cuenta ${cuenta} no existe`);
    if (cuenta === b.cuentaOrdenante) return err(-24, `Cuenta {${cuenta}} - {MISMA_CUENTA}`);
    const id = this.nextId++;
    this.orders.set(`${fecha}/${clave}`, { id, fechaOperacion: fecha, body: b, estado: this.initialEstado });
    return { resultado: { id } };
  }

  /** consOrdenesFech: the orders sent (estado E) on an operation day, as the stpmex-python cassettes show them. */
  private conciliacion(b: Record<string, unknown>) {
    const fechaOperacion = typeof b.fechaOperacion === 'string' ? b.fechaOperacion : undefined;
    this.conciliaCalls.push({ fechaOperacion });
    const c = `|||${String(b.empresa)}|${fechaOperacion ?? ''}|||${'|'.repeat(30)}`;
    if (!this.verify(c, String(b.firma))) return { resultado: { id: 0, descripcionError: 'Error validando la firma' } };
    if (b.estado !== 'E' && b.estado !== 'R') return { resultado: { id: 0, descripcionError: 'El campo estado es obligatorio' } };
    const day = fechaOperacion ?? this.fecha;
    const lst = b.estado === 'R' ? [] : [...this.orders.values()].filter((o) => o.fechaOperacion === day).map((o) => ({
      causaDevolucion: o.causaDevolucion ?? 0, claveRastreo: o.body.claveRastreo, conceptoPago: o.body.conceptoPago, cuentaBeneficiario: o.body.cuentaBeneficiario, empresa: this.opts.empresa,
      estado: o.estado, fechaOperacion: Number(day), institucionContraparte: Number(o.body.institucionContraparte), monto: o.body.monto, nombreBeneficiario: o.body.nombreBeneficiario,
      referenciaNumerica: o.body.referenciaNumerica, tipoPago: o.body.tipoPago, topologia: 'V', tsCaptura: Date.now() - 1000, tsLiquidacion: o.estado === 'LQ' ? Date.now() : 0,
    }));
    if (!lst.length) return { resultado: { descripcionError: 'No se encontraron ordenes', id: -100 } };
    return { resultado: { id: 1, lst } };
  }

  private consulta(b: Record<string, unknown>) {
    const clave = String(b.claveRastreo);
    const fechaOperacion = typeof b.fechaOperacion === 'string' ? b.fechaOperacion : undefined;
    this.consultaCalls.push({ claveRastreo: clave, fechaOperacion });
    const c = `|||${String(b.empresa)}|${fechaOperacion ?? ''}||${clave}|${String(b.institucionOperante)}${'|'.repeat(30)}`;
    if (!this.verify(c, String(b.firma))) return { resultado: { id: 0, descripcionError: 'Error validando la firma' } };
    const o = this.orders.get(`${fechaOperacion ?? this.fecha}/${clave}`);
    if (!o) return { resultado: { descripcionError: `No se encontró la orden con rastreo ${clave}`, id: -100 } };
    const ob = o.body;
    return {
      resultado: {
        id: 1,
        ordenPago: {
          causaDevolucion: o.causaDevolucion ?? 0,
          claveRastreo: clave,
          conceptoPago: ob.conceptoPago,
          cuentaBeneficiario: ob.cuentaBeneficiario,
          cuentaOrdenante: ob.cuentaOrdenante,
          empresa: ob.empresa,
          estado: o.estado,
          fechaOperacion: Number(o.fechaOperacion),
          folioOrigen: clave,
          idCliente: clave,
          idEF: o.id,
          institucionContraparte: Number(ob.institucionContraparte),
          institucionOperante: Number(ob.institucionOperante),
          medioEntrega: ob.medioEntrega,
          monto: ob.monto,
          nombreBeneficiario: ob.nombreBeneficiario,
          referenciaNumerica: ob.referenciaNumerica,
          rfcCurpBeneficiario: ob.rfcCurpBeneficiario,
          tipoCuentaBeneficiario: ob.tipoCuentaBeneficiario,
          tipoCuentaOrdenante: ob.tipoCuentaOrdenante,
          tipoPago: ob.tipoPago,
          topologia: 'V',
          tsCaptura: Date.now() - 1000,
          tsLiquidacion: o.estado === 'LQ' || o.estado === 'D' ? Date.now() : 0,
        },
      },
    };
  }

  private verify(text: string, firma: string) {
    try {
      return createVerify('RSA-SHA256').update(text, 'utf8').verify(this.key, firma, 'base64');
    } catch {
      return false;
    }
  }
}

function send(res: ServerResponse, status: number, text: string, contentType: string) {
  res.writeHead(status, { 'content-type': contentType });
  res.end(text);
}
const json = (res: ServerResponse, body: unknown) => send(res, 200, JSON.stringify(body), 'application/json');

function post(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
