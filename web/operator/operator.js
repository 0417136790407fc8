// The operator console (docs/operator.md): plain DOM, no framework, no inline script (strict CSP).
// Sign-in, the second factor and sessions are the portal's (/portal/api/session*); every screen
// reads and acts through /portal/api/operator/*, the /admin operations re-served for operators.
const API = '/portal/api/operator';
const app = document.getElementById('app');
const state = { csrf: '', me: null, view: 'home', flash: null };

// ---- helpers -----------------------------------------------------------------------------------

function h(tag, attrs = {}, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  return el;
}

async function call(method, path, body, extra = {}) {
  const headers = { accept: 'application/json', ...extra };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && state.csrf) headers['x-csrf-token'] = state.csrf;
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  let data = null;
  try { data = await r.json(); } catch { data = null; }
  if (data && data.csrf_token) state.csrf = data.csrf_token;
  return { status: r.status, body: data };
}

const money = (minor, currency = 'MXN') => `${new Intl.NumberFormat('es-MX', { style: 'currency', currency, currencyDisplay: 'narrowSymbol' }).format(Number(minor) / 100)} ${currency}`;
const when = (iso) => (iso ? new Date(iso).toLocaleString('es-MX', { timeZone: 'America/Mexico_City', dateStyle: 'short', timeStyle: 'short' }) : '—');
const short = (id) => (id ? String(id).slice(0, 8) : '—');
const can = (p) => !!state.me && state.me.permissions.includes(p);
const requester = (x) => (/^[0-9a-f-]{36}$/i.test(x || '') ? `llave API ${short(x)}` : x || '—');
const errText = (r) => (r.body && r.body.error ? `${r.body.error.message} (${r.body.error.code})` : `HTTP ${r.status}`);

function flash(kind, text) {
  state.flash = { kind, text };
  const f = document.getElementById('flash');
  if (f) { f.className = `flash ${kind}`; f.textContent = text; f.hidden = false; f.focus(); }
}

/** The outcome of an action, shown once the screen is drawn again with its result (then focused, for screen readers). */
async function report(kind, text) {
  state.flash = { kind, text };
  await render();
  const f = document.getElementById('flash');
  if (f) f.focus();
}

function table(caption, cols, rows, empty) {
  if (!rows.length) return h('p', { class: 'empty' }, empty);
  return h('table', {},
    h('caption', { text: caption }),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col', text: c[0] })))),
    h('tbody', {}, rows.map((r) => h('tr', {}, cols.map((c) => h('td', { 'data-label': c[0] }, c[1](r)))))));
}

/** A dialog that says what will happen and asks why; resolves with the reason or null. */
function confirmAction(title, what, { needReason = true, label = 'Motivo' } = {}) {
  return new Promise((resolve) => {
    const id = `dlg-${Math.random().toString(36).slice(2, 8)}`;
    const input = h('textarea', { id: `${id}-r`, rows: 3, required: needReason ? true : undefined });
    const d = h('dialog', { 'aria-labelledby': `${id}-t`, class: 'dialog' },
      h('form', { method: 'dialog' },
        h('h2', { id: `${id}-t`, text: title }),
        h('p', { class: 'what', text: what }),
        h('label', { for: `${id}-r`, text: label }), input,
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'secondary', onclick: () => { d.close(); d.remove(); resolve(null); } }, 'Cancelar'),
          h('button', { type: 'submit', class: 'primary', onclick: (e) => {
            if (needReason && !input.value.trim()) { e.preventDefault(); input.focus(); return; }
            e.preventDefault(); d.close(); d.remove(); resolve(input.value.trim() || undefined);
          } }, 'Confirmar'))));
    document.body.append(d);
    d.showModal();
    input.focus();
  });
}

async function act(title, what, method, path, body = {}, opts = {}) {
  const reason = await confirmAction(title, what, opts);
  if (reason === null) return null;
  // The reason goes in the body where the operation takes one (opts.field), and always in
  // X-Operator-Reason, which the audit row records for operations whose body has no reason.
  const payload = body === undefined ? undefined : { ...body, ...(reason && opts.field ? { [opts.field]: reason } : {}) };
  const r = await call(method, path, payload, reason ? { 'x-operator-reason': encodeURIComponent(reason) } : {});
  if (r.status === 202) await report('info', `Pedido: otro operador debe aprobarlo (cuatro ojos). Decisión ${short(r.body.id)}.`);
  else if (r.status < 400) await report('ok', `${title}: hecho.`);
  else await report('error', errText(r));
  return r;
}

// ---- sign-in and second factor (the portal's) ---------------------------------------------------

function signInView(step = 'password', message) {
  const email = h('input', { id: 'email', type: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const code = h('input', { id: 'code', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: 6, required: true });
  const msg = h('p', { class: 'flash error', role: 'alert', hidden: !message, text: message || '' });
  const form = h('form', { class: 'card narrow', onsubmit: async (e) => {
    e.preventDefault();
    const r = step === 'password' ? await call('POST', '/portal/api/session', { email: email.value, password: password.value }) : await call('POST', '/portal/api/session/totp', { code: code.value });
    if (r.status !== 200) { msg.textContent = step === 'password' ? 'Correo o contraseña incorrectos.' : 'Código incorrecto.'; msg.hidden = false; return; }
    if (r.body.stage === 'totp') return mount(signInView('totp'));
    boot();
  } },
    h('h1', { text: 'Consola de operación' }),
    h('p', { class: 'sub', text: 'Orquesta · personal de la plataforma. Se requiere segundo factor.' }),
    msg,
    step === 'password' ? [h('label', { for: 'email', text: 'Correo' }), email, h('label', { for: 'password', text: 'Contraseña' }), password]
      : [h('label', { for: 'code', text: 'Código de tu app autenticadora' }), code],
    h('button', { type: 'submit', class: 'primary' }, step === 'password' ? 'Entrar' : 'Verificar'));
  return h('main', { id: 'main' }, form);
}

async function totpSetupView() {
  const r = await call('POST', '/portal/api/me/totp');
  const code = h('input', { id: 'setup-code', inputmode: 'numeric', pattern: '[0-9]{6}', maxlength: 6, required: true });
  const msg = h('p', { class: 'flash error', role: 'alert', hidden: true });
  return h('main', { id: 'main' }, h('form', { class: 'card narrow', onsubmit: async (e) => {
    e.preventDefault();
    const c = await call('POST', '/portal/api/me/totp/confirm', { code: code.value });
    if (c.status >= 400) { msg.textContent = 'Código incorrecto.'; msg.hidden = false; return; }
    boot();
  } },
    h('h1', { text: 'Activa tu segundo factor' }),
    h('p', { text: 'Los operadores entran siempre con un código de app autenticadora. Escanea el código QR o escribe la clave.' }),
    r.body && r.body.qr_svg ? h('img', { src: r.body.qr_svg, alt: 'Código QR para la app autenticadora', width: 180, height: 180 }) : null,
    h('p', {}, 'Clave: ', h('code', { id: 'totp-secret', text: r.body ? r.body.secret : '' })),
    msg, h('label', { for: 'setup-code', text: 'Código de 6 dígitos' }), code,
    h('button', { type: 'submit', class: 'primary' }, 'Activar')));
}

// ---- screens -----------------------------------------------------------------------------------

const NAV = [
  ['home', 'Inicio', 'read'], ['applications', 'Solicitudes', 'read'], ['risk', 'Riesgo', 'read'], ['approvals', 'Aprobaciones', 'read'],
  ['decisions', 'Cuatro ojos', 'read'], ['connect', 'Connect', 'read'], ['tenants', 'Comercios', 'read'], ['terminals', 'Terminales', 'read'],
  ['inspect', 'Trazas', 'read'], ['signups', 'Altas', 'read'], ['testing', 'Pruebas', 'simulate'], ['audit', 'Auditoría', 'read'], ['operators', 'Operadores', 'operators'],
];

async function home() {
  const [apps, reviews, refunds, payouts, decisions] = await Promise.all([
    call('GET', `${API}/onboarding/applications?status=needs_info`), call('GET', `${API}/risk_reviews?status=pending`),
    call('GET', `${API}/refund_approvals?status=pending`), call('GET', `${API}/payout_approvals?status=pending`), call('GET', `${API}/decisions?status=pending`),
  ]);
  const n = (r) => (r.body && r.body.data ? r.body.data.length : 0);
  const tile = (label, count, view) => h('li', {}, h('button', { class: 'tile', onclick: () => go(view) }, h('span', { class: 'count', text: String(count) }), h('span', { text: label })));
  return [h('h1', { text: 'Lo que espera una decisión' }), h('ul', { class: 'tiles' },
    tile('Solicitudes con información pendiente', n(apps), 'applications'), tile('Revisiones de riesgo', n(reviews), 'risk'),
    tile('Reembolsos por aprobar', n(refunds), 'approvals'), tile('Transferencias por aprobar', n(payouts), 'approvals'),
    tile('Decisiones de cuatro ojos', n(decisions), 'decisions'))];
}

async function applications() {
  const status = state.appStatus || 'needs_info';
  const r = await call('GET', `${API}/onboarding/applications?status=${status}`);
  const sel = h('select', { id: 'app-status', onchange: (e) => { state.appStatus = e.target.value; render(); } },
    ['draft', 'needs_info', 'approved', 'rejected'].map((s) => h('option', { value: s, selected: s === status ? true : undefined, text: s })));
  const list = table('Solicitudes de alta de subcomercios', [
    ['Comercio', (a) => a.tenant_name], ['Razón social', (a) => a.legal_name], ['RFC', (a) => a.rfc || '—'], ['Estado', (a) => h('span', { class: `badge ${a.status}`, text: a.status })],
    ['Verificador', (a) => (a.flagged ? h('span', { class: 'badge flag', text: 'marcada' }) : '—')],
    ['', (a) => h('button', { class: 'link', onclick: () => { state.app = { tenant: a.tenant_id, id: a.id }; go('application'); } }, `Revisar ${a.legal_name}`)],
  ], r.body ? r.body.data : [], 'No hay solicitudes en este estado.');
  return [h('h1', { text: 'Solicitudes de alta' }), h('label', { for: 'app-status', text: 'Estado' }), sel, list];
}

async function application() {
  const { tenant, id } = state.app;
  const r = await call('GET', `${API}/tenants/${tenant}/onboarding/applications/${id}`);
  if (r.status >= 400) return [h('p', { class: 'flash error', text: errText(r) })];
  const a = r.body;
  const base = `${API}/tenants/${tenant}/onboarding/applications/${id}`;
  const open = a.status === 'draft' || a.status === 'needs_info';
  return [
    h('h1', { text: a.legal_name }),
    a.flagged ? h('p', { class: 'flash warn', text: 'El verificador la marcó: aprobarla necesita un segundo operador.' }) : null,
    h('dl', { class: 'facts' }, [
      ['Estado', a.status], ['Tipo', a.person_type], ['RFC', a.rfc || '—'], ['CLABE', a.clabe_masked || '—'], ['Contacto', a.contact_email], ['Motivo', a.status_reason || '—'], ['Resuelta por', a.resolved_by || '—'],
      ['Formato RFC', a.verification.rfc_format], ['Documentos', a.verification.documents], ['Listas 69-B', a.list_hits.length ? a.list_hits.map((x) => `${x.list}: ${x.reason}`).join('; ') : 'sin coincidencias'],
    ].map(([k, v]) => [h('dt', { text: k }), h('dd', { text: v })]).flat()),
    table('Documentos', [['Tipo', (d) => d.document_type], ['Referencia', (d) => d.reference], ['Hash', (d) => h('code', { text: String(d.reference_hash).slice(0, 16) + '…' })]], a.documents || [], 'Sin documentos.'),
    open && can('decide') ? h('div', { class: 'actions' },
      h('button', { class: 'primary', onclick: () => act('Aprobar solicitud', a.flagged ? 'La solicitud queda pedida: otro operador debe aprobarla.' : 'La solicitud queda aprobada y el subcomercio podrá tener cuenta Connect.', 'POST', `${base}/approve`, {}, { field: 'reason' }) }, 'Aprobar'),
      h('button', { class: 'secondary', onclick: () => act('Pedir información', 'La solicitud vuelve al solicitante con tu motivo.', 'POST', `${base}/request-info`, {}, { field: 'reason' }) }, 'Pedir información'),
      h('button', { class: 'danger', onclick: () => act('Rechazar solicitud', 'La solicitud queda rechazada (definitivo).', 'POST', `${base}/reject`, {}, { field: 'reason' }) }, 'Rechazar')) : null,
    h('button', { class: 'link', onclick: () => go('applications') }, '← Volver a solicitudes'),
  ];
}

async function risk() {
  const r = await call('GET', `${API}/risk_reviews?status=pending`);
  const reviews = table('Revisiones de riesgo pendientes', [
    ['Comercio', (x) => x.tenant_name], ['Pago', (x) => h('code', { text: short(x.payment_intent_id) })], ['Monto', (x) => money(x.amount_minor, x.currency)], ['Regla', (x) => x.rule], ['Creada', (x) => when(x.created_at)],
    ['', (x) => can('decide') ? h('span', { class: 'actions' },
      h('button', { class: 'primary', onclick: () => act('Aprobar revisión', `El pago de ${money(x.amount_minor, x.currency)} sigue y se cobra.`, 'POST', `${API}/tenants/${x.tenant_id}/risk_reviews/${x.id}/approve`, {}, { needReason: false }) }, 'Aprobar'),
      h('button', { class: 'danger', onclick: () => act('Rechazar revisión', 'El pago falla; no se cobra.', 'POST', `${API}/tenants/${x.tenant_id}/risk_reviews/${x.id}/reject`, {}, { needReason: false }) }, 'Rechazar')) : ''],
  ], r.body ? r.body.data : [], 'No hay revisiones pendientes.');
  const tenant = h('input', { id: 'rules-tenant', value: state.rulesTenant || '', placeholder: 'id del comercio' });
  const out = [h('h1', { text: 'Riesgo' }), reviews, h('h2', { text: 'Reglas de riesgo' }),
    h('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); state.rulesTenant = tenant.value.trim(); render(); } }, h('label', { for: 'rules-tenant', text: 'Comercio' }), tenant, h('button', { class: 'secondary' }, 'Ver reglas'))];
  if (state.rulesTenant) {
    const rules = await call('GET', `${API}/tenants/${state.rulesTenant}/risk_rules`);
    out.push(table('Reglas del comercio', [['Regla', (x) => `${x.field} ${x.operator} ${JSON.stringify(x.value)}`], ['Acción', (x) => x.action], ['Activa', (x) => (x.active ? 'sí' : 'no')],
      ['', (x) => (x.active && can('tenants') ? h('button', { class: 'danger', onclick: () => act('Desactivar regla', 'La regla deja de aplicarse a pagos nuevos.', 'POST', `${API}/tenants/${state.rulesTenant}/risk_rules/${x.id}/deactivate`, {}, { needReason: false }) }, 'Desactivar') : '')]],
      rules.body && rules.body.data ? rules.body.data : [], 'Sin reglas.'));
    if (can('tenants')) {
      const f = h('select', { id: 'rule-field' }, ['amount_minor', 'total_minor', 'payment_method', 'currency'].map((v) => h('option', { value: v, text: v })));
      const o = h('select', { id: 'rule-op' }, ['gte', 'gt', 'lte', 'lt', 'eq', 'neq'].map((v) => h('option', { value: v, text: v })));
      const v = h('input', { id: 'rule-value', required: true });
      const a = h('select', { id: 'rule-action' }, ['review', 'block'].map((x) => h('option', { value: x, text: x })));
      out.push(h('form', { class: 'inline', onsubmit: async (e) => {
        e.preventDefault();
        const value = /^\d+$/.test(v.value) ? Number(v.value) : v.value;
        const r2 = await call('POST', `${API}/tenants/${state.rulesTenant}/risk_rules`, { field: f.value, operator: o.value, value, action: a.value });
        await report(r2.status < 400 ? 'ok' : 'error', r2.status < 400 ? 'Regla agregada.' : errText(r2));
      } }, h('label', { for: 'rule-field', text: 'Campo' }), f, h('label', { for: 'rule-op', text: 'Operador' }), o, h('label', { for: 'rule-value', text: 'Valor' }), v, h('label', { for: 'rule-action', text: 'Acción' }), a, h('button', { class: 'primary' }, 'Agregar regla')));
    }
  }
  return out;
}

async function approvals() {
  const [rf, po] = await Promise.all([call('GET', `${API}/refund_approvals?status=pending`), call('GET', `${API}/payout_approvals?status=pending`)]);
  const approver = () => ({ approver: `operator:${state.me.email}` });
  return [h('h1', { text: 'Aprobaciones' }),
    table('Reembolsos por aprobar', [['Comercio', (x) => x.tenant_name], ['Monto', (x) => money(x.amount_minor, x.currency)], ['Pedido por', (x) => requester(x.requested_by)], ['Motivo', (x) => x.reason || '—'],
      ['', (x) => can('decide') ? h('span', { class: 'actions' },
        h('button', { class: 'primary', onclick: () => act('Aprobar reembolso', `Se reembolsan ${money(x.amount_minor, x.currency)} al pagador ahora.`, 'POST', `${API}/tenants/${x.tenant_id}/refund_approvals/${x.id}/approve`, approver(), { needReason: false }) }, 'Aprobar'),
        h('button', { class: 'danger', onclick: () => act('Rechazar reembolso', 'No se reembolsa nada.', 'POST', `${API}/tenants/${x.tenant_id}/refund_approvals/${x.id}/reject`, approver(), { needReason: false }) }, 'Rechazar')) : '']],
    rf.body ? rf.body.data : [], 'No hay reembolsos por aprobar.'),
    table('Transferencias (payouts) por aprobar', [['Comercio', (x) => x.tenant_name], ['Monto', (x) => money(x.amount_minor, x.currency)], ['CLABE', (x) => x.subject], ['Pedido por', (x) => requester(x.requested_by)],
      ['', (x) => can('decide') ? h('span', { class: 'actions' },
        h('button', { class: 'primary', onclick: () => act('Aprobar transferencia', `Sobre el umbral: queda pedida y otro operador debe aprobarla; entonces se envían ${money(x.amount_minor, x.currency)} a ${x.subject}.`, 'POST', `${API}/tenants/${x.tenant_id}/payout_approvals/${x.id}/approve`, approver(), { label: 'Motivo (lo verá el segundo operador)' }) }, 'Pedir aprobación'),
        h('button', { class: 'danger', onclick: () => act('Rechazar transferencia', 'No se envía nada.', 'POST', `${API}/tenants/${x.tenant_id}/payout_approvals/${x.id}/reject`, approver(), { needReason: false }) }, 'Rechazar')) : '']],
    po.body ? po.body.data : [], 'No hay transferencias por aprobar.')];
}

const ACTION_LABEL = { 'payout_approval.approve': 'Aprobar transferencia sobre el umbral', 'tenant.release': 'Liberar comercio suspendido', 'onboarding_application.approve': 'Aprobar solicitud marcada' };

/** What the second operator needs to see of the target, without ids. */
function snapshotText(x) {
  if (!x) return '—';
  const parts = [];
  if (x.amount_minor !== undefined) parts.push(money(x.amount_minor, x.currency || 'MXN'));
  if (x.clabe_masked) parts.push(`CLABE ${x.clabe_masked}`);
  if (x.legal_name) parts.push(x.legal_name);
  if (x.rfc) parts.push(`RFC ${x.rfc}`);
  if (x.name) parts.push(x.name);
  if (x.suspended_reason) parts.push(`suspendido: ${x.suspended_reason}`);
  if (x.status_reason) parts.push(`verificador: ${x.status_reason}`);
  if (x.status) parts.push(`estado al pedir: ${x.status}`);
  return parts.join(' · ') || '—';
}

async function decisions() {
  const r = await call('GET', `${API}/decisions?status=${state.decStatus || 'pending'}`);
  const sel = h('select', { id: 'dec-status', onchange: (e) => { state.decStatus = e.target.value; render(); } },
    ['pending', 'approved', 'rejected'].map((s) => h('option', { value: s, selected: s === (state.decStatus || 'pending') ? true : undefined, text: s })));
  return [h('h1', { text: 'Decisiones de cuatro ojos' }), h('p', { class: 'sub', text: 'Quien pide no puede aprobar: otro operador decide.' }), h('label', { for: 'dec-status', text: 'Estado' }), sel,
    table('Decisiones', [
      ['Acción', (d) => ACTION_LABEL[d.action] || d.action], ['Objeto', (d) => h('code', { text: `${d.target.kind} ${short(d.target.id)}` })],
      ['Comercio', (d) => d.tenant_name || short(d.tenant_id)],
      ['Detalle', (d) => snapshotText(d.snapshot)],
      ['Pidió', (d) => `${d.requested_by.email || short(d.requested_by.id)}${d.reason ? ` — «${d.reason}»` : ''}`],
      ['Decidió', (d) => (d.decided_by ? d.decided_by.email : '—')], ['Estado', (d) => h('span', { class: `badge ${d.status}`, text: d.status })],
      ['', (d) => (d.status === 'pending' && can('decide') ? h('span', { class: 'actions' },
        d.requested_by.id === state.me.id ? h('span', { class: 'note', text: 'La pediste tú.' }) : null,
        h('button', { class: 'primary', onclick: () => act(`Aprobar: ${ACTION_LABEL[d.action] || d.action}`, `Se ejecuta ahora, a tu nombre, lo que pidió ${d.requested_by.email}.`, 'POST', `${API}/decisions/${d.id}/approve`, {}, { needReason: false, field: 'note' }) }, 'Aprobar'),
        h('button', { class: 'danger', onclick: () => act('Rechazar decisión', 'No se ejecuta nada.', 'POST', `${API}/decisions/${d.id}/reject`, {}, { field: 'note', label: 'Nota' }) }, 'Rechazar')) : '')],
    ], r.body ? r.body.data : [], 'No hay decisiones en este estado.')];
}

async function connect() {
  const r = await call('GET', `${API}/connect/accounts`);
  return [h('h1', { text: 'Cuentas Connect' }), table('Cuentas de subcomercios', [
    ['Comercio', (x) => x.tenant_name], ['Subcomercio', (x) => x.sub_merchant_name], ['CLABE', (x) => x.settlement_clabe_masked], ['Estado', (x) => h('span', { class: `badge ${x.status}`, text: x.status })],
    ['', (x) => (can('decide') ? (x.status === 'active'
      ? h('button', { class: 'danger', onclick: () => act('Suspender cuenta', 'La cuenta deja de recibir dispersiones; las ya enviadas siguen.', 'POST', `${API}/tenants/${x.tenant_id}/connect/accounts/${x.id}/suspend`, {}) }, `Suspender ${x.sub_merchant_name}`)
      : h('button', { class: 'primary', onclick: () => act('Reactivar cuenta', 'La cuenta vuelve a recibir dispersiones.', 'POST', `${API}/tenants/${x.tenant_id}/connect/accounts/${x.id}/reactivate`, {}) }, `Reactivar ${x.sub_merchant_name}`)) : '')],
  ], r.body ? r.body.data : [], 'No hay cuentas.')];
}

async function tenants() {
  if (state.tenant) return tenantView(state.tenant);
  const r = await call('GET', `${API}/tenants`);
  return [h('h1', { text: 'Comercios' }), table('Comercios', [
    ['Nombre', (t) => t.name], ['Llaves activas', (t) => t.active_keys], ['Estado', (t) => h('span', { class: `badge ${t.suspended ? 'suspended' : 'active'}`, text: t.suspended ? 'suspendido' : 'activo' })], ['Alta', (t) => when(t.created_at)],
    ['', (t) => h('button', { class: 'link', onclick: () => { state.tenant = t.id; render(); } }, `Abrir ${t.name}`)],
  ], r.body ? r.body.data : [], 'No hay comercios.')];
}

async function tenantView(id) {
  const r = await call('GET', `${API}/tenants/${id}`);
  if (r.status >= 400) return [h('p', { class: 'flash error', text: errText(r) })];
  const t = r.body;
  const threshold = h('input', { id: 'threshold', type: 'number', min: 1, value: t.settings && t.settings.refund_approval_threshold_minor ? t.settings.refund_approval_threshold_minor : '' });
  const payoutThreshold = h('input', { id: 'payout-threshold', type: 'number', min: 1, value: t.settings && t.settings.payout_approval_threshold_minor ? t.settings.payout_approval_threshold_minor : '' });
  return [h('h1', { text: t.name }),
    h('p', {}, h('span', { class: `badge ${t.suspended ? 'suspended' : 'active'}`, text: t.suspended ? `suspendido: ${t.suspended_reason || ''}` : 'activo' })),
    can('tenants') ? h('div', { class: 'actions' }, t.suspended
      ? h('button', { class: 'primary', onclick: () => act('Liberar comercio', 'Queda pedido: otro operador debe aprobar la liberación; entonces sus llaves vuelven a funcionar.', 'POST', `${API}/tenants/${id}/release`, {}, { field: 'reason' }) }, 'Pedir liberación')
      : h('button', { class: 'danger', onclick: () => act('Suspender comercio', 'Sus llaves API responden 401 desde ya, en todos los procesos.', 'POST', `${API}/tenants/${id}/suspend`, {}, { field: 'reason' }) }, 'Suspender')) : null,
    table('Llaves API', [['Llave', (k) => h('code', { text: short(k.id) })], ['Modo', (k) => (k.livemode ? 'real' : 'prueba')], ['Alcances', (k) => k.scopes.join(', ')], ['Estado', (k) => (k.revoked ? 'revocada' : 'activa')],
      ['', (k) => (!k.revoked && can('tenants') ? h('button', { class: 'danger', onclick: () => act('Revocar llave', 'La llave responde 401 desde ya.', 'DELETE', `${API}/tenants/${id}/api_keys/${k.id}`, undefined, { needReason: false }) }, `Revocar ${short(k.id)}`) : '')]], t.api_keys, 'Sin llaves.'),
    can('tenants') ? h('form', { class: 'inline', onsubmit: async (e) => {
      e.preventDefault();
      const r2 = await call('PATCH', `${API}/tenants/${id}/settings`, threshold.value ? { refund_approval_threshold_minor: Number(threshold.value) } : { refund_approval_disabled: true });
      await report(r2.status < 400 ? 'ok' : 'error', r2.status < 400 ? 'Ajustes guardados.' : errText(r2));
    } }, h('label', { for: 'threshold', text: 'Umbral de reembolso con cuatro ojos (centavos)' }), threshold, h('button', { class: 'secondary' }, 'Guardar')) : null,
    can('tenants') ? h('form', { class: 'inline', onsubmit: async (e) => {
      e.preventDefault();
      const r2 = await call('PATCH', `${API}/tenants/${id}/payout_settings`, payoutThreshold.value ? { payout_approval_threshold_minor: Number(payoutThreshold.value) } : { payout_approval_disabled: true });
      await report(r2.status < 400 ? 'ok' : 'error', r2.status < 400 ? 'Umbral de transferencias guardado.' : errText(r2));
    } }, h('label', { for: 'payout-threshold', text: 'Umbral de transferencias con cuatro ojos (centavos)' }), payoutThreshold, h('button', { class: 'secondary' }, 'Guardar umbral')) : null,
    h('p', { class: 'actions' },
      h('button', { class: 'link', onclick: () => { state.terminalsTenant = id; go('terminals'); } }, 'Terminales de este comercio'),
      h('button', { class: 'link', onclick: () => { state.tenant = null; render(); } }, '← Todos los comercios'))];
}

async function terminals() {
  const tenant = h('input', { id: 'term-tenant', value: state.terminalsTenant || '', placeholder: 'id del comercio' });
  const out = [h('h1', { text: 'Terminales' }), h('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); state.terminalsTenant = tenant.value.trim(); render(); } },
    h('label', { for: 'term-tenant', text: 'Comercio' }), tenant, h('button', { class: 'secondary' }, 'Ver terminales'))];
  const t = state.terminalsTenant;
  if (!t) return out;
  const r = await call('GET', `${API}/tenants/${t}/terminals`);
  if (r.status >= 400) return [...out, h('p', { class: 'flash error', text: errText(r) })];
  const base = `${API}/tenants/${t}/terminals`;
  out.push(table('Terminales del comercio', [
    ['Serie', (x) => x.serial], ['Sucursal', (x) => x.branch], ['Caja', (x) => x.register || '—'], ['Modo', (x) => (x.livemode ? 'real' : 'prueba')], ['Estado', (x) => h('span', { class: `badge ${x.status}`, text: x.status })],
    ['', (x) => (can('terminals') ? h('span', { class: 'actions' },
      x.status !== 'active' ? h('button', { class: 'primary', onclick: () => act('Activar terminal', `Los cobros con metadata.terminal_id = ${x.id} se aceptan.`, 'POST', `${base}/${x.id}/activate`, {}, { needReason: false, field: 'reason' }) }, `Activar ${x.serial}`) : null,
      x.status !== 'inactive' ? h('button', { class: 'danger', onclick: () => act('Desactivar terminal', 'Los cobros que la nombren se rechazan desde ya.', 'POST', `${base}/${x.id}/deactivate`, {}, { field: 'reason' }) }, `Desactivar ${x.serial}`) : null,
      h('button', { class: 'secondary', onclick: async () => {
        const branch = await confirmAction('Reasignar terminal', 'Escribe la nueva sucursal; la caja se conserva.', { label: 'Sucursal nueva' });
        if (!branch) return;
        const r2 = await call('POST', `${base}/${x.id}/reassign`, { branch });
        await report(r2.status < 400 ? 'ok' : 'error', r2.status < 400 ? 'Terminal reasignada.' : errText(r2));
      } }, `Reasignar ${x.serial}`)) : '')],
  ], r.body.data, 'Este comercio no tiene terminales.'));
  if (can('terminals')) {
    const serial = h('input', { id: 't-serial', required: true });
    const branch = h('input', { id: 't-branch', required: true });
    const reg = h('input', { id: 't-register' });
    const live = h('input', { id: 't-live', type: 'checkbox' });
    const activate = h('input', { id: 't-activate', type: 'checkbox', checked: true });
    out.push(h('h2', { text: 'Registrar terminal' }), h('form', { class: 'inline', onsubmit: async (e) => {
      e.preventDefault();
      const r2 = await call('POST', base, { serial: serial.value, branch: branch.value, ...(reg.value ? { register: reg.value } : {}), livemode: live.checked, activate: activate.checked });
      await report(r2.status < 400 ? 'ok' : 'error', r2.status < 400 ? `Terminal ${r2.body.serial} registrada (${r2.body.status}).` : errText(r2));
    } }, h('label', { for: 't-serial', text: 'Número de serie' }), serial, h('label', { for: 't-branch', text: 'Sucursal' }), branch, h('label', { for: 't-register', text: 'Caja' }), reg,
      h('label', { class: 'check' }, live, ' Modo real'), h('label', { class: 'check' }, activate, ' Activar ya'), h('button', { class: 'primary' }, 'Registrar')));
  }
  return out;
}

async function inspect() {
  const tenant = h('input', { id: 'i-tenant', value: (state.inspect && state.inspect.tenant) || '', required: true });
  const kind = h('select', { id: 'i-kind' }, [['payment_intents', 'Pago'], ['refunds', 'Reembolso'], ['payouts', 'Transferencia'], ['invoices', 'Factura']].map(([v, l]) => h('option', { value: v, text: l, selected: state.inspect && state.inspect.kind === v ? true : undefined })));
  const id = h('input', { id: 'i-id', value: (state.inspect && state.inspect.id) || '', required: true });
  const out = [h('h1', { text: 'Trazas e historial de trabajos' }), h('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); state.inspect = { tenant: tenant.value.trim(), kind: kind.value, id: id.value.trim() }; render(); } },
    h('label', { for: 'i-tenant', text: 'Comercio' }), tenant, h('label', { for: 'i-kind', text: 'Objeto' }), kind, h('label', { for: 'i-id', text: 'Id' }), id, h('button', { class: 'primary' }, 'Ver'))];
  if (!state.inspect) return out;
  const r = await call('GET', `${API}/tenants/${state.inspect.tenant}/inspect/${state.inspect.kind}/${state.inspect.id}`);
  if (r.status >= 400) return [...out, h('p', { class: 'flash error', text: errText(r) })];
  const link = (x) => (x.trace_url ? h('a', { href: x.trace_url, target: '_blank', rel: 'noopener' }, `traza ${short(x.trace_id)}`) : x.trace_id ? h('code', { text: short(x.trace_id) }) : '—');
  return [...out, h('p', {}, `${r.body.kind} ${r.body.id} · ${r.body.status}`),
    table('Pasos', [['Cuándo', (s) => when(s.at)], ['Evento', (s) => s.event], ['De → a', (s) => `${s.from_status || '∅'} → ${s.to_status}`], ['Traza', link]], r.body.steps, 'Sin pasos.'),
    table('Trabajos', [['Cuándo', (j) => when(j.started_at)], ['Trabajo', (j) => j.name], ['Intento', (j) => `${j.attempt}/${j.max_attempts}`], ['Resultado', (j) => h('span', { class: `badge ${j.outcome}`, text: j.outcome })], ['Error', (j) => j.error || '—'], ['Traza', link]], r.body.jobs, r.body.job_history === 'off' ? 'El historial de trabajos está apagado (JOB_HISTORY_HOURS=0).' : 'Sin trabajos registrados.')];
}

async function signups() {
  const r = await call('GET', `${API}/signups`);
  return [h('h1', { text: 'Altas' }), table('Registros públicos', [['Correo', (s) => s.email], ['Razón social', (s) => s.legal_name], ['Estado', (s) => s.status], ['Código', (s) => s.verification_code || '—'], ['Creado', (s) => when(s.created_at)]], r.body && r.body.data ? r.body.data : [], 'Sin altas.')];
}

async function testing() {
  const t1 = h('input', { id: 's-tenant', required: true });
  const ref = h('input', { id: 's-ref', required: true });
  const t2 = h('input', { id: 'p-tenant', required: true });
  const po = h('input', { id: 'p-id', required: true });
  const go2 = (path, body, label) => async (e) => {
    e.preventDefault();
    const r = await call('POST', path(), body());
    flash(r.status < 400 ? 'ok' : 'error', r.status < 400 ? label : errText(r));
  };
  return [h('h1', { text: 'Pruebas (modo de prueba)' }), h('p', { class: 'sub', text: 'Simula lo que haría el banco o el cliente: solo para pagos y transferencias de prueba.' }),
    h('h2', { text: 'Pago entrante (SPEI, CoDi, OXXO)' }),
    h('form', { class: 'inline', onsubmit: go2(() => `${API}/tenants/${t1.value.trim()}/simulate-inbound`, () => ({ provider_ref: ref.value.trim() }), 'Pago entrante simulado: el pago se mueve en segundos.') },
      h('label', { for: 's-tenant', text: 'Comercio' }), t1, h('label', { for: 's-ref', text: 'provider_ref del intento' }), ref, h('button', { class: 'primary' }, 'Simular pago')),
    h('h2', { text: 'Devolución de una transferencia' }),
    h('form', { class: 'inline', onsubmit: go2(() => `${API}/tenants/${t2.value.trim()}/payouts/${po.value.trim()}/simulate-return`, () => ({}), 'Devolución simulada.') },
      h('label', { for: 'p-tenant', text: 'Comercio' }), t2, h('label', { for: 'p-id', text: 'Id de la transferencia' }), po, h('button', { class: 'primary' }, 'Simular devolución'))];
}

/**
 * What changed between an audit row's before and after, key by key: the keys `after` records (a
 * removed value is recorded as null) whose value differs from `before`; ids and object names left out.
 */
function changes(before, after) {
  const b = before && typeof before === 'object' ? before : {};
  const a = after && typeof after === 'object' ? after : {};
  const show = (v) => (v === undefined || v === null ? '∅' : typeof v === 'object' ? JSON.stringify(v) : String(v)).slice(0, 60);
  const keys = Object.keys(a).filter((k) => !['id', 'object', 'tenant_id', 'created_at', 'updated_at'].includes(k) && JSON.stringify(b[k]) !== JSON.stringify(a[k]));
  if (!keys.length) return before || after ? 'sin cambios' : '—';
  return h('ul', { class: 'changes' }, keys.slice(0, 8).map((k) => h('li', {}, h('code', { text: k }), `: ${show(b[k])} → ${show(a[k])}`)), keys.length > 8 ? h('li', { text: `y ${keys.length - 8} más` }) : null);
}

async function audit() {
  const f = state.auditFilter || {};
  const qs = new URLSearchParams(Object.entries(f).filter(([, v]) => v)).toString();
  const r = await call('GET', `${API}/audit_log?limit=100${qs ? `&${qs}` : ''}`);
  const tenant = h('input', { id: 'a-tenant', value: f.tenant_id || '', placeholder: 'id del comercio' });
  const action = h('input', { id: 'a-action', value: f.action || '', placeholder: 'p. ej. tenant.release' });
  const target = h('input', { id: 'a-target', value: f.target_id || '', placeholder: 'id del objeto' });
  return [h('h1', { text: 'Auditoría' }),
    h('form', { class: 'inline', onsubmit: (e) => { e.preventDefault(); state.auditFilter = { tenant_id: tenant.value.trim(), action: action.value.trim(), target_id: target.value.trim() }; render(); } },
      h('label', { for: 'a-tenant', text: 'Comercio' }), tenant, h('label', { for: 'a-action', text: 'Acción' }), action, h('label', { for: 'a-target', text: 'Objeto' }), target, h('button', { class: 'secondary' }, 'Filtrar')),
    h('p', {}, h('a', { href: `${API}/audit_log/export?format=csv${qs ? `&${qs}` : ''}`, download: true }, 'Exportar CSV'), ' · ', h('a', { href: `${API}/audit_log/export?format=jsonl${qs ? `&${qs}` : ''}`, download: true }, 'Exportar JSON Lines')),
    r.status >= 400 ? h('p', { class: 'flash error', text: errText(r) }) : null,
    table(`Acciones de operación (más recientes primero)${qs ? ` · filtro: ${Object.entries(f).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join(', ')}` : ''}`, [['Cuándo', (x) => when(x.at)], ['Quién', (x) => `${x.actor.name || x.actor.id} (${x.actor.kind})`], ['Qué', (x) => x.action], ['Objeto', (x) => (x.target ? `${x.target.kind} ${short(x.target.id)}` : '—')], ['Por qué', (x) => x.reason || '—'],
      ['Antes → después', (x) => changes(x.before, x.after)]], r.body && r.body.data ? r.body.data : [], 'Sin acciones.')];
}

async function operators() {
  const r = await call('GET', `${API}/operators`);
  const email = h('input', { id: 'o-email', type: 'email', required: true });
  const name = h('input', { id: 'o-name', required: true });
  const role = h('select', { id: 'o-role' }, ['reviewer', 'support', 'viewer', 'admin'].map((x) => h('option', { value: x, text: x })));
  /** Another role, or disabled / active again (an operator cannot change themselves: another admin must). */
  const manage = (o) => {
    if (o.id === state.me.id) return h('span', { class: 'note', text: 'Tú' });
    const sel = h('select', { id: `role-${o.id}`, 'aria-label': `Rol de ${o.name}` }, ['admin', 'reviewer', 'support', 'viewer'].map((x) => h('option', { value: x, text: x, selected: x === o.role ? true : undefined })));
    return h('span', { class: 'actions' }, sel,
      h('button', { class: 'secondary', onclick: () => act(`Cambiar rol de ${o.name}`, `${o.name} pasa de ${o.role} a ${sel.value}.`, 'PATCH', `${API}/operators/${o.id}`, { role: sel.value }) }, `Cambiar rol de ${o.name}`),
      o.status === 'active'
        ? h('button', { class: 'danger', onclick: () => act(`Desactivar a ${o.name}`, 'Sus sesiones terminan ya y no puede volver a entrar.', 'PATCH', `${API}/operators/${o.id}`, { status: 'disabled' }) }, `Desactivar a ${o.name}`)
        : h('button', { class: 'primary', onclick: () => act(`Reactivar a ${o.name}`, 'Puede volver a entrar con su contraseña y su código.', 'PATCH', `${API}/operators/${o.id}`, { status: 'active' }) }, `Reactivar a ${o.name}`));
  };
  return [h('h1', { text: 'Operadores' }), table('Equipo de operación', [['Nombre', (o) => o.name], ['Correo', (o) => o.email], ['Rol', (o) => o.role], ['2FA', (o) => (o.totp_enabled ? 'sí' : 'pendiente')], ['Estado', (o) => o.status], ['', manage]], r.body ? r.body.data : [], 'Sin operadores.'),
    h('h2', { text: 'Agregar operador' }), h('form', { class: 'inline', onsubmit: async (e) => {
      e.preventDefault();
      const r2 = await call('POST', `${API}/operators`, { email: email.value, name: name.value, role: role.value });
      await report(r2.status < 400 ? 'ok' : 'error', r2.status < 400 ? `Se envió a ${r2.body.email} un enlace para elegir contraseña.` : errText(r2));
    } }, h('label', { for: 'o-email', text: 'Correo' }), email, h('label', { for: 'o-name', text: 'Nombre' }), name, h('label', { for: 'o-role', text: 'Rol' }), role, h('button', { class: 'primary' }, 'Agregar'))];
}

const SCREENS = { home, applications, application, risk, approvals, decisions, connect, tenants, terminals, inspect, signups, testing, audit, operators };

// ---- shell -------------------------------------------------------------------------------------

function mount(node) {
  app.replaceChildren(node);
}

function go(view) {
  state.view = view;
  state.flash = null;
  if (view === 'tenants') state.tenant = null;
  render();
}

async function render() {
  const me = state.me;
  const nav = h('nav', { 'aria-label': 'Secciones' }, h('ul', {}, NAV.filter(([, , p]) => can(p)).map(([v, label]) =>
    h('li', {}, h('button', { class: state.view === v || (v === 'applications' && state.view === 'application') ? 'nav current' : 'nav', 'aria-current': state.view === v ? 'page' : undefined, onclick: () => go(v) }, label)))));
  const header = h('header', {}, h('span', { class: 'brand', text: 'Orquesta · Operación' }),
    h('span', { class: 'who' }, `${me.name} · ${me.role}`),
    h('button', { class: 'secondary', onclick: async () => { await call('DELETE', '/portal/api/session'); state.me = null; mount(signInView()); } }, 'Salir'));
  const f = h('p', { id: 'flash', tabindex: -1, role: 'status', class: state.flash ? `flash ${state.flash.kind}` : 'flash', hidden: !state.flash, text: state.flash ? state.flash.text : '' });
  let content;
  try {
    content = await SCREENS[state.view]();
  } catch (e) {
    content = [h('p', { class: 'flash error', text: String(e) })];
  }
  mount(h('div', { class: 'shell' }, header, nav, h('main', { id: 'main' }, f, content)));
}

async function boot() {
  const s = await call('GET', '/portal/api/session');
  if (s.status !== 200) return mount(signInView());
  if (s.body.totp_setup_required) return mount(await totpSetupView());
  const me = await call('GET', `${API}/me`);
  if (me.status !== 200) {
    return mount(h('main', { id: 'main' }, h('div', { class: 'card narrow' }, h('h1', { text: 'Sin acceso' }), h('p', { text: errText(me) }),
      h('button', { class: 'secondary', onclick: async () => { await call('DELETE', '/portal/api/session'); mount(signInView()); } }, 'Salir'))));
  }
  state.me = me.body;
  render();
}

boot();
