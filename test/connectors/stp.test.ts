// The STP adapter beyond the shared conformance scenarios: the cadena and signature against STP's
// golden vectors (cuenca-mx/stpmex-python), every documented answer of registraOrden mapped, every
// order state, callbacks in both formats, credentials faults, and the status query's dates.
import t from 'tap';
import { createPrivateKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import {
  buildOrden,
  cadenaConsulta,
  cadenaOrden,
  ESTADOS,
  mapConsulta,
  mapRegistra,
  parseStpCallback,
  sign,
  stateOfEstado,
  stpText,
} from '../../connectors/payout/stp-mapping.js';
import { StpPayoutRail } from '../../connectors/payout/stp.js';
import { consultaFechaBody, mapConciliacion } from '../../connectors/payout/stp-mapping.js';
import { RailCallbackError, RailConfigurationError, trackingKeyFor, type PayoutOrder } from '../../connectors/payout/rail.js';
import { FakeStp } from '../fakes/stp.js';
import { makeClabe } from '../../formats/clabe.js';
import { CUENCA_CADENA, CUENCA_CONSULTA_ANSWER, CUENCA_CONSULTA_FIRMA, CUENCA_FIRMA, CUENCA_ORDER, CUENCA_TEST_KEY, CUENCA_TEST_KEY_PASSPHRASE } from '../fakes/stp-vectors.js';
import { newOrder } from './payout-conformance.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

t.test('cadena and firma match STP golden vectors', async (t) => {
  const key = createPrivateKey({ key: CUENCA_TEST_KEY, passphrase: CUENCA_TEST_KEY_PASSPHRASE });
  t.equal(cadenaOrden(CUENCA_ORDER), CUENCA_CADENA, 'the 34 fields in order, zero written 0, monto with 2 decimals');
  t.equal(sign(key, CUENCA_CADENA), CUENCA_FIRMA, 'RSA-SHA256 PKCS#1 v1.5, base64');
  t.equal(sign(key, cadenaConsulta('TAMIZI', '20200420', 'CR1564969083', '90646')), CUENCA_CONSULTA_FIRMA, 'the query cadena');
  // The same order built from a payout gives the same body and cadena.
  const order: PayoutOrder = {
    key: 'k', trackingKey: 'CR1564969083', operationDate: '20200420', tenantId: randomUUID(), livemode: true, amountMinor: 120, currency: 'MXN',
    clabe: '072691004495711499', beneficiaryName: 'Ricardo Sanchez', concepto: 'Prueba', numericReference: 5273144,
  };
  const built = buildOrden(order, { empresa: 'TAMIZI', cuentaOrdenante: '646180110400000007' }, '40072');
  t.same(built, CUENCA_ORDER);
  t.equal(cadenaOrden(built), CUENCA_CADENA);
});

t.test('consOrdenesFech: the query by date is signed as STP\'s client signs it (golden vector) and its answers mapped (issue 28.6)', async (t) => {
  const key = createPrivateKey({ key: CUENCA_TEST_KEY, passphrase: CUENCA_TEST_KEY_PASSPHRASE });
  // cuenca-mx/stpmex-python tests/resources/cassettes/test_consulta_ordenes_enviadas_con_fecha.yaml (request body).
  t.same(consultaFechaBody('TAMIZI', '20200420', key), {
    empresa: 'TAMIZI', estado: 'E', fechaOperacion: '20200420',
    firma: 'MWqmcIak/f37rGEwPyV10GD7gL9SjNlSTY7/EJFq8zVO+EWbPUhz3eGUz/md3RwldosNSDBpWE3AtubbBMMp0FI/0vXmxkDaAnK2Oixvk9pCW1fIaPv/mufbvkPGqBUdveKjRl5fWwQjw0oTUtqj8kFSk8Ub6OLw2kRK4JDWrqw=',
  });
  t.same(mapConciliacion({ resultado: { descripcionError: 'No se encontraron ordenes', id: -100 } }), [], '-100: no orders that day');
  t.match(mapConciliacion({ resultado: { id: 1, lst: [{ claveRastreo: 'CR1564969083', estado: 'D', causaDevolucion: 1 }, { claveRastreo: 'CR2', estado: 'LQ' }] } }), [
    { trackingKey: 'CR1564969083', state: { state: 'returned' } },
    { trackingKey: 'CR2', state: { state: 'paid' } },
  ]);
  t.throws(() => mapConciliacion({ resultado: { id: 0, descripcionError: 'Error validando la firma' } }), { name: 'OutcomeUnknown', reason: 'bad_response' });
});

t.test('text is folded to ASCII and cut at 39 characters', async (t) => {
  t.equal(stpText('  Ñandú  Pérez-Müller  '), 'Nandu Perez-Muller');
  t.equal(stpText('x'.repeat(50)).length, 39);
  t.equal(stpText('Pago 😀 de comisión'), 'Pago de comision');
});

t.test('registraOrden answers: every documented one mapped, anything else refused', async (t) => {
  t.same(mapRegistra({ resultado: { id: 9349827 } }), { kind: 'accepted', providerRef: '9349827' });
  const cases: Array<[number, string, string]> = [
    [0, 'No se recibió respuesta del servicio', 'unknown'],
    [0, 'Error validando la firma', 'stp_invalid_signature'],
    [0, 'El campo conceptoPago es obligatorio', 'stp_missing_field'],
    [0, 'No entity found for query', 'stp_configuration'],
    [-1, 'La clave de rastreo CR1 para la fecha 20200420 de la institucion 90646 ya fue utilizada', 'duplicate'],
    [-2, 'Orden duplicada', 'duplicate'],
    [-6, 'Empresa invalida', 'stp_invalid_company'],
    [-7, 'La cuenta 072691004495711499 no existe', 'account_not_found'],
    [-9, 'La Institucion 40999 no es valida', 'invalid_institution'],
    [-11, 'El tipo de cuenta 41 es invalido', 'invalid_account_type'],
    [-20, 'El monto {0.00} no es válido', 'invalid_amount'],
    [-22, 'La cuenta clabe 072691004495711499 no coincide para la institucion operante 40012', 'clabe_bank_mismatch'],
    [-24, 'Cuenta {646180110400000007} - {MISMA_CUENTA}', 'same_account'],
    [-34, 'Clave rastreo invalida', 'invalid_tracking_key'],
    [-200, 'Orden sin cuenta ordenante. Se rechaza por PLD', 'aml_rejected'],
  ];
  for (const [id, d, want] of cases) {
    const r = mapRegistra({ resultado: { id, descripcionError: d } });
    if (want === 'unknown' || want === 'duplicate') t.equal(r.kind, want, `${id} ${d}`);
    else t.match(r, { kind: 'rejected', code: want, reason: String }, `${id} ${d}`);
  }
  t.throws(() => mapRegistra({ resultado: { id: -999, descripcionError: 'Algo nuevo' } }), { name: 'OutcomeUnknown', reason: 'bad_response' }, 'an undocumented id');
  t.throws(() => mapRegistra({ resultado: { id: -7, descripcionError: 'Texto distinto' } }), { name: 'OutcomeUnknown', reason: 'bad_response' }, 'a documented id with other text');
  t.throws(() => mapRegistra({ resultado: { id: 0 } }), { name: 'OutcomeUnknown', reason: 'bad_response' }, 'id 0 without a description');
  t.throws(() => mapRegistra({ resultado: { id: 5, descripcionError: 'x' } }), { name: 'OutcomeUnknown', reason: 'bad_response' }, 'a positive id with an error');
  t.throws(() => mapRegistra({ foo: 1 }), { name: 'OutcomeUnknown', reason: 'bad_response' });
  t.throws(() => mapRegistra(null), { name: 'OutcomeUnknown', reason: 'bad_response' });
});

t.test('order states: every documented estado mapped; unknown or foreign ones refused', async (t) => {
  t.match(stateOfEstado('LQ', '1'), { state: 'paid' });
  t.match(stateOfEstado('E', '1'), { state: 'in_flight' });
  t.match(stateOfEstado('D', '1', 1), { state: 'returned', reason: /causa de devolución 1/ });
  t.match(stateOfEstado('CN', '1'), { state: 'failed', code: 'stp_cancelled' });
  for (const [code, e] of Object.entries(ESTADOS)) {
    if (e.meaning === 'not_an_outgoing_order') t.throws(() => stateOfEstado(code, '1'), { name: 'OutcomeUnknown', reason: 'bad_response' }, `${code} is not of a sent order`);
    else t.equal(stateOfEstado(code, '1').state, e.meaning, `${code} ${e.name}`);
  }
  t.throws(() => stateOfEstado('ZZ', '1'), { name: 'OutcomeUnknown', reason: 'bad_response' });
  t.match(mapConsulta(CUENCA_CONSULTA_ANSWER), { state: 'returned', providerRef: '7838161' }, "STP's recorded answer of a returned order");
  t.equal(mapConsulta({ resultado: { descripcionError: 'No se encontró la orden con rastreo x', id: -100 } }), null);
  t.throws(() => mapConsulta({ resultado: { id: 0, descripcionError: 'Error validando la firma' } }), { name: 'OutcomeUnknown', reason: 'bad_response' });
  t.throws(() => mapConsulta({}), { name: 'OutcomeUnknown', reason: 'bad_response' });
});

t.test('status callbacks: current and legacy formats', async (t) => {
  t.same(parseStpCallback(JSON.stringify({ id: 7838161, empresa: 'TAMIZI', folioOrigen: 'CR1', estado: 'LQ', causaDevolucion: '', tsLiquidacion: 1 })), {
    providerRef: '7838161', trackingKey: 'CR1', claimed: 'paid', account: 'TAMIZI',
  });
  t.match(parseStpCallback(JSON.stringify({ id: 5, empresa: 'X', folioOrigen: 'CR1', estado: 'Devuelta', causaDevolucion: '1' })), { claimed: 'returned' });
  t.match(parseStpCallback(JSON.stringify({ id: 5, empresa: 'X', folioOrigen: 'CR1', estado: 'Cancelada' })), { claimed: 'failed' });
  t.match(parseStpCallback(JSON.stringify({ id: '5', Estado: 'LIQUIDACION', Detalle: 'x' })), { providerRef: '5', claimed: 'paid' }, 'legacy');
  t.match(parseStpCallback(JSON.stringify({ id: 5, Estado: 'DEVOLUCION' })), { claimed: 'returned' });
  for (const bad of ['nope', '[]', '{}', '{"id":5}', '{"id":-1,"estado":"LQ"}', '{"id":5,"estado":"QQ"}', '{"id":5,"estado":"R"}']) {
    t.throws(() => parseStpCallback(bad), RailCallbackError, bad);
  }
});

t.test('the adapter against the fake: rejections, credentials, the query dates', async (t) => {
  const passphrase = 'pw-' + randomUUID();
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
  });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const fake = await new FakeStp({ empresa: 'ORQUESTA', publicKey }).start();
  t.teardown(() => fake.stop());
  const tenantId = randomUUID();
  let creds: Record<string, unknown> | null = { empresa: 'ORQUESTA', cuentaOrdenante: '646180110400000007', privateKeyPem: privateKey, passphrase };
  let now = new Date();
  const rail = new StpPayoutRail({ baseUrl: fake.url, timeoutMs: 1000, credentials: async () => creds as never, now: () => now });
  const h = { tenantId, livemode: true };

  t.test('each documented rejection the fake produces is a failed payout with its code', async (t) => {
    fake.reject(-200, 'Orden sin cuenta ordenante. Se rechaza por PLD');
    t.match(await rail.send(newOrder(h)), { state: 'failed', code: 'aml_rejected' });
    fake.reject(0, 'El campo conceptoPago es obligatorio');
    t.match(await rail.send(newOrder(h)), { state: 'failed', code: 'stp_missing_field' });
    t.match(await rail.send(newOrder(h, { clabe: makeClabe('030', '180', '00000000001') })), { state: 'failed', code: 'invalid_institution' }, 'a bank the fake does not route');
    fake.fail('no_response');
    await t.rejects(rail.send(newOrder(h)), OutcomeUnknown, '"no se recibió respuesta" is an unknown outcome');
    fake.reject(-999, 'Nuevo error');
    await t.rejects(rail.send(newOrder(h)), { name: 'OutcomeUnknown', reason: 'bad_response' });
    t.match(await rail.send(newOrder(h, { amountMinor: 5 })), { state: 'in_flight' }, 'five cents is a valid amount');
  });

  t.test('a duplicate tracking key is answered by asking STP', async (t) => {
    const o = newOrder(h);
    const first = await rail.send(o);
    const again = await rail.send(o);
    t.same(again, { state: 'paid', providerRef: (first as { providerRef: string }).providerRef });
    t.equal(fake.registraCalls.get(o.trackingKey), 2, 'the second send reached STP and was refused as a duplicate');
  });

  t.test('a signature STP cannot verify fails the payout, naming the key', async (t) => {
    creds = { empresa: 'ORQUESTA', cuentaOrdenante: '646180110400000007', privateKeyPem: other.privateKey, passphrase: '' };
    t.match(await rail.send(newOrder(h)), { state: 'failed', code: 'stp_invalid_signature', reason: /private key/ });
    creds = { empresa: 'OTRA', cuentaOrdenante: '646180110400000007', privateKeyPem: privateKey, passphrase };
    t.match(await rail.send(newOrder(h)), { state: 'failed', code: 'stp_invalid_company' });
    creds = { empresa: 'ORQUESTA', cuentaOrdenante: '646180110400000007', privateKeyPem: privateKey, passphrase: 'wrong' };
    await t.rejects(rail.send(newOrder(h)), { name: 'OutcomeUnknown', message: /cannot be opened/ }, 'a wrong passphrase sends nothing');
    creds = null;
    await t.rejects(rail.send(newOrder(h)), { name: 'OutcomeUnknown', message: /no STP credentials/ });
    creds = { empresa: 'ORQUESTA', cuentaOrdenante: '646180110400000007', privateKeyPem: privateKey, passphrase };
  });

  t.test('the status query looks at STP today, the recorded day and the days after it', async (t) => {
    const saved = fake.fecha;
    t.teardown(() => {
      fake.fecha = saved;
      now = new Date();
    });
    const o = newOrder(h, { operationDate: '20260102' });
    fake.fecha = '20260105'; // sent after the cut-off on Friday the 2nd: STP booked it on Monday the 5th
    await rail.send(o);
    fake.fecha = '20260107'; // asked on Wednesday the 7th
    now = new Date('2026-01-07T18:00:00Z');
    fake.consultaCalls.length = 0;
    t.match(await rail.status(o), { state: 'paid' });
    t.same(fake.consultaCalls.map((c) => c.fechaOperacion ?? 'today'), ['today', '20260102', '20260103', '20260104', '20260105']);
  });

  t.test('a 403 HTML page from STP\'s gateway (no VPN, IP not registered) is a configuration error, not an outage to retry (issue 28.6)', async (t) => {
    fake.forbidden = true;
    try {
      const e = await rail.send(newOrder(h)).catch((x) => x);
      t.ok(e instanceof RailConfigurationError, 'send: RailConfigurationError');
      t.notOk(e instanceof OutcomeUnknown, 'not the transient kind (the job does not retry it)');
      t.match(e.message, /not registered with STP or the VPN/);
      t.ok((await rail.status(newOrder(h)).catch((x) => x)) instanceof RailConfigurationError, 'status too');
    } finally {
      fake.forbidden = false;
    }
    fake.fail('http500');
    t.ok((await rail.send(newOrder(h)).catch((x) => x)) instanceof OutcomeUnknown, 'a 5xx is still an outage (unknown, retried)');
  });

  t.test('the day\'s conciliation finds every order sent, with its state, in one call (issue 28.6)', async (t) => {
    now = new Date();
    fake.initialEstado = 'E';
    const a = newOrder(h);
    const b = newOrder(h);
    await rail.send(a);
    await rail.send(b);
    fake.settle(b.trackingKey, 'D', 1);
    fake.initialEstado = 'LQ';
    const day = await rail.conciliate(h.tenantId, h.livemode, fake.fecha);
    t.match(day.find((o) => o.trackingKey === a.trackingKey), { state: { state: 'in_flight' } });
    t.match(day.find((o) => o.trackingKey === b.trackingKey), { state: { state: 'returned' } });
    t.same(await rail.conciliate(h.tenantId, h.livemode, '20000101'), [], 'a day without orders');
    t.same(fake.conciliaCalls.slice(-2).map((c) => c.fechaOperacion), [fake.fecha, '20000101']);
  });

  t.test('tracking keys: alphanumeric, 28 characters, one per payout id', async (t) => {
    const id = randomUUID();
    t.match(trackingKeyFor(id), /^ORQ[0-9A-Z]{25}$/);
    t.equal(trackingKeyFor(id), trackingKeyFor(id));
    t.not(trackingKeyFor(id), trackingKeyFor(randomUUID()));
    t.equal(trackingKeyFor('ffffffff-ffff-ffff-ffff-ffffffffffff').length, 28);
  });
});
