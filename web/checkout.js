/* Orquesta checkout kit: a dependency-free script a merchant page includes to mount a checkout
 * for a payment intent. It talks only to /public routes with the intent's client_secret.
 *
 *   <div data-orquesta-checkout data-payment-intent="pi id" data-client-secret="pi_secret_…"></div>
 *   <script src="https://<orquesta>/js/checkout.js"></script>
 *
 * or OrquestaCheckout.mount(element, { intentId, clientSecret, baseUrl }).
 */
(function () {
  'use strict';
  var TERMINAL = { succeeded: 1, failed: 1, canceled: 1, expired: 1 };
  var POLL_MS = 2000; // spec: the kit polls every 2 seconds until a terminal state
  var METHOD_LABEL = { card: 'Tarjeta', spei: 'SPEI', codi: 'CoDi', oxxo: 'OXXO' };
  var TOKEN_LABEL = {
    tok_sim_ok: 'Aprobada (tok_sim_ok)', tok_sim_auth: 'Solo autorizar (tok_sim_auth)', tok_sim_3ds: '3-D Secure (tok_sim_3ds)',
    tok_sim_insufficient: 'Fondos insuficientes (tok_sim_insufficient)', tok_sim_fraud: 'Sospecha de fraude (tok_sim_fraud)',
    tok_sim_issuer_down: 'Emisor no disponible (tok_sim_issuer_down)', tok_sim_slow: 'Aprobada, lenta (tok_sim_slow)'
  };

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) e.appendChild(c); });
    return e;
  }

  function money(minor, currency) {
    try { return new Intl.NumberFormat('es-MX', { style: 'currency', currency: currency }).format(minor / 100); }
    catch (_) { return (minor / 100).toFixed(2) + ' ' + currency; }
  }

  function mount(root, opts) {
    opts = opts || {};
    var id = opts.intentId || root.getAttribute('data-payment-intent');
    var secret = opts.clientSecret || root.getAttribute('data-client-secret');
    var base = (opts.baseUrl || root.getAttribute('data-base-url') || '').replace(/\/+$/, '');
    var state = { method: 'card', tip: 0, config: null, polling: null };

    function api(method, path, body) {
      var headers = { 'Accept': 'application/json' };
      if (method === 'GET') headers['X-Service-Client-Secret'] = secret;
      else headers['Content-Type'] = 'application/json';
      return fetch(base + path, { method: method, headers: headers, body: body ? JSON.stringify(body) : undefined })
        .then(function (r) {
          return r.json().catch(function () { return {}; }).then(function (j) {
            if (!r.ok) { var err = new Error((j.error && j.error.message) || ('HTTP ' + r.status)); err.code = j.error && j.error.code; throw err; }
            return j;
          });
        });
    }

    function show(node) { root.innerHTML = ''; root.appendChild(node); }

    function header(cfg) {
      return el('div', { class: 'orq-head' }, [
        el('div', { class: 'orq-merchant', text: cfg.merchant_display_name }),
        cfg.concepto ? el('div', { class: 'orq-concept', text: cfg.concepto }) : null,
        el('div', { class: 'orq-amount', 'data-testid': 'amount', text: money(cfg.amount_minor + state.tip, cfg.currency) }),
        cfg.test_mode ? el('div', { class: 'orq-badge', text: 'Modo de prueba' }) : null
      ]);
    }

    function renderForm() {
      var cfg = state.config;
      var tipRow = el('div', { class: 'orq-tips' }, [el('span', { text: 'Propina' })].concat(
        [{ percent: 0, amount_minor: 0 }].concat(cfg.tip_suggestions).map(function (s) {
          return el('button', {
            type: 'button', class: 'orq-chip' + (state.tip === s.amount_minor ? ' orq-on' : ''), 'data-testid': 'tip-' + s.percent,
            text: s.percent ? s.percent + '%' : 'Sin propina',
            onclick: function () { state.tip = s.amount_minor; renderForm(); }
          });
        })));
      var tabs = el('div', { class: 'orq-tabs', role: 'tablist' }, cfg.allowed_methods.map(function (m) {
        return el('button', {
          type: 'button', role: 'tab', class: 'orq-tab' + (state.method === m ? ' orq-on' : ''), 'data-testid': 'method-' + m,
          text: METHOD_LABEL[m] || m, onclick: function () { state.method = m; renderForm(); }
        });
      }));
      var fields = el('div', { class: 'orq-fields' });
      var tokenizer = null;
      if (state.method === 'card') {
        if (cfg.test_mode) {
          var sel = el('select', { id: 'orq-token', 'data-testid': 'token-select', 'aria-label': 'Tarjeta de prueba' },
            (cfg.test_tokens || []).map(function (t) { return el('option', { value: t, text: TOKEN_LABEL[t] || t }); }));
          fields.appendChild(el('label', { for: 'orq-token', text: 'Tarjeta de prueba' }));
          fields.appendChild(sel);
        } else if (cfg.card_tokenizer && window.OrqTokenize) {
          tokenizer = window.OrqTokenize.mount(fields, cfg.card_tokenizer); // web/tokenize.js: the card goes to the connector only
        } else {
          fields.appendChild(el('label', { for: 'orq-token', text: 'Token de tarjeta' }));
          fields.appendChild(el('input', { id: 'orq-token', 'data-testid': 'token-input', autocomplete: 'off' }));
        }
      } else {
        fields.appendChild(el('p', { class: 'orq-hint', text: { spei: 'Recibirás una CLABE para transferir desde tu banco.', codi: 'Recibirás un código QR para pagar con CoDi.', oxxo: 'Recibirás una referencia para pagar en efectivo en OXXO.' }[state.method] }));
      }
      var error = el('div', { class: 'orq-error', role: 'alert', 'data-testid': 'error' });
      var pay = el('button', {
        type: 'button', class: 'orq-pay', 'data-testid': 'pay', text: 'Pagar ' + money(cfg.amount_minor + state.tip, cfg.currency),
        onclick: function () {
          pay.disabled = true;
          var tokenEl = root.querySelector('#orq-token');
          var token = state.method === 'card' ? (tokenEl && tokenEl.value) : state.method;
          if (!token && !(tokenizer && state.method === 'card')) { error.textContent = 'Falta la tarjeta.'; pay.disabled = false; return; }
          (tokenizer && state.method === 'card' ? tokenizer.tokenize() : Promise.resolve(token))
            .then(function (tok) { return api('POST', '/public/payment_intents/' + id + '/confirm', { client_secret: secret, payment_token: tok, payment_method: state.method, tip_minor: state.tip }); })
            .then(function (pi) { renderStatus(pi); poll(); })
            .catch(function (e) { error.textContent = e.message; pay.disabled = false; });
        }
      });
      show(el('div', { class: 'orq-card' }, [header(cfg), tipRow, tabs, fields, error, pay]));
    }

    function instructions(na) {
      if (!na) return null;
      if (na.type === 'bank_transfer') return el('dl', { class: 'orq-instr' }, [
        el('dt', { text: 'CLABE' }), el('dd', { 'data-testid': 'clabe', class: 'orq-mono', text: na.clabe }),
        el('dt', { text: 'Beneficiario' }), el('dd', { 'data-testid': 'beneficiary', text: na.beneficiary }),
        el('dt', { text: 'Vence' }), el('dd', { 'data-testid': 'expires', text: new Date(na.expires_at).toLocaleString('es-MX') })
      ]);
      if (na.type === 'codi_qr') return el('div', { class: 'orq-instr' }, [
        el('img', { 'data-testid': 'qr', alt: 'Código QR de CoDi', width: '200', height: '200', src: base + '/public/qr.svg?data=' + encodeURIComponent(na.qr_payload) }),
        el('div', { class: 'orq-hint', text: 'Escanéalo con la app de tu banco. Vence ' + new Date(na.expires_at).toLocaleString('es-MX') })
      ]);
      if (na.type === 'oxxo_voucher') return el('dl', { class: 'orq-instr' }, [
        el('dt', { text: 'Referencia OXXO' }), el('dd', { 'data-testid': 'reference', class: 'orq-mono', text: na.reference }),
        el('dt', { text: 'Vence' }), el('dd', { text: new Date(na.expires_at).toLocaleString('es-MX') })
      ]);
      if (na.type === 'redirect') {
        var back = na.redirect_url + (na.redirect_url.indexOf('?') < 0 ? '?' : '&') + 'return_to=' + encodeURIComponent(location.href);
        return el('div', { class: 'orq-instr' }, [
          el('p', { text: 'Tu banco pide confirmar el pago (3-D Secure).' }),
          el('a', { class: 'orq-pay', 'data-testid': 'redirect', href: back, text: 'Autenticar' })
        ]);
      }
      return null;
    }

    function renderStatus(pi) {
      var cfg = state.config;
      var text = {
        processing: 'Procesando tu pago…', requires_action: 'Completa el pago con estas instrucciones:', succeeded: 'Pago exitoso. ¡Gracias!',
        failed: 'El pago fue rechazado.', expired: 'La referencia venció sin pago.', canceled: 'El pago fue cancelado.',
        requires_payment_method: 'El pago no se completó; intenta con otro medio.'
      }[pi.status] || pi.status;
      var retry = pi.status === 'requires_payment_method';
      show(el('div', { class: 'orq-card' }, [
        header(cfg),
        el('div', { class: 'orq-result orq-' + pi.status, 'data-testid': 'result', 'data-status': pi.status, role: 'status', text: text }),
        pi.status === 'requires_action' ? instructions(pi.next_action) : null,
        TERMINAL[pi.status] ? el('div', { class: 'orq-total', text: 'Total ' + money(pi.total_minor, pi.currency) }) : null,
        retry ? el('button', { type: 'button', class: 'orq-pay', 'data-testid': 'retry', text: 'Intentar de nuevo', onclick: function () { state.polling = null; renderForm(); } }) : null
      ]));
      root.setAttribute('data-status', pi.status);
    }

    function poll() {
      if (state.polling) return;
      state.polling = setInterval(function () {
        api('GET', '/public/payment_intents/' + id).then(function (pi) {
          renderStatus(pi);
          if (TERMINAL[pi.status] || pi.status === 'requires_payment_method') { clearInterval(state.polling); state.polling = null; }
        }).catch(function () { /* keep polling through a transient error */ });
      }, POLL_MS);
    }

    return Promise.all([api('GET', '/public/payment_intents/' + id + '/checkout-config'), api('GET', '/public/payment_intents/' + id)])
      .then(function (r) {
        state.config = r[0];
        var pi = r[1];
        if (pi.status === 'requires_payment_method' || pi.status === 'requires_confirmation') renderForm();
        else { renderStatus(pi); if (!TERMINAL[pi.status]) poll(); }
      })
      .catch(function (e) { show(el('div', { class: 'orq-card orq-error', 'data-testid': 'error', text: 'No se pudo cargar el pago: ' + e.message })); });
  }

  window.OrquestaCheckout = { mount: mount };
  function auto() {
    var nodes = document.querySelectorAll('[data-orquesta-checkout]');
    for (var i = 0; i < nodes.length; i++) mount(nodes[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', auto); else auto();
})();
