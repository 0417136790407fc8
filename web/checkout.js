/* Orquesta checkout kit: a dependency-free script a merchant page includes to mount a checkout
 * for a payment intent. It talks only to /public routes with the intent's client_secret.
 *
 *   <div data-orquesta-checkout data-payment-intent="pi id" data-client-secret="pi_secret_…"></div>
 *   <script src="https://<orquesta>/js/checkout.js"></script>
 *
 * or OrquestaCheckout.mount(element, { intentId, clientSecret, baseUrl, locale }).
 *
 * It works on any origin: the service is where the script came from (its own `src`), unless a
 * `data-base-url` on the script or the mount (or the `baseUrl` option) says otherwise. /public
 * answers cross-origin calls (CORS, no cookies: the client secret is the credential). The kit
 * adds its stylesheet (/js/checkout.css) unless the page has it or the script says
 * data-styles="none". A 3-D Secure page returns to the page that confirmed (`return_url`).
 *
 * It speaks the page's language: English inside an element with lang="en…" (or locale: 'en'),
 * Spanish otherwise. A declined intent cannot be paid again: off /pay/{slug}, "another method"
 * dispatches a bubbling `orquesta:retry` event for the page to mount a new intent.
 */
(function () {
  'use strict';
  // The service this script came from (read now: currentScript is set only while it runs).
  var SCRIPT = document.currentScript;
  var SCRIPT_BASE = (function () {
    if (!SCRIPT) return '';
    var attr = SCRIPT.getAttribute('data-base-url');
    if (attr) return attr.replace(/\/+$/, '');
    try {
      var u = new URL(SCRIPT.src, location.href);
      var prefix = u.pathname.replace(/\/js\/checkout\.js$/, '').replace(/\/+$/, '');
      // On the service's own pages the links stay relative; elsewhere they name the service.
      return (u.origin === location.origin ? '' : u.origin) + prefix;
    } catch (_) { return ''; }
  })();
  var TERMINAL = { succeeded: 1, failed: 1, canceled: 1, expired: 1 };
  // A payment that went through or is on its way: a reusable link shows it again instead of a new form.
  var UNDER_WAY = { succeeded: 1, processing: 1, requires_action: 1 };
  var POLL_MS = 2000; // spec: the kit polls every 2 seconds until a terminal state
  // Every word the kit shows, per language: the mount's language (its nearest `lang`, or the
  // `locale` option) picks the table; Spanish unless the page is in English. The API's own English
  // `message` is never shown: each error and decline code is worded here.
  var TEXT = {
    es: {
      intl: 'es-MX',
      method: { card: 'Tarjeta', spei: 'SPEI', codi: 'CoDi', oxxo: 'OXXO' },
      token: {
        tok_sim_ok: 'Aprobada (tok_sim_ok)', tok_sim_auth: 'Solo autorizar (tok_sim_auth)', tok_sim_3ds: '3-D Secure (tok_sim_3ds)',
        tok_sim_insufficient: 'Fondos insuficientes (tok_sim_insufficient)', tok_sim_fraud: 'Sospecha de fraude (tok_sim_fraud)',
        tok_sim_issuer_down: 'Emisor no disponible (tok_sim_issuer_down)', tok_sim_slow: 'Aprobada, lenta (tok_sim_slow)'
      },
      // Why a payment was declined (checkout-config last_payment_error.code).
      decline: {
        insufficient_funds: 'Tu tarjeta no tiene fondos suficientes.',
        suspected_fraud: 'Tu banco detuvo el pago por seguridad. Llama a tu banco o paga con otro medio.',
        authentication_failed: 'No se completó la verificación de tu banco (3-D Secure).',
        issuer_unavailable: 'Tu banco no respondió. Intenta de nuevo en unos minutos o paga con otro medio.',
        provider_error: 'El procesador de pagos tuvo un problema. Intenta de nuevo.',
        invalid_credentials: 'Este comercio no puede cobrar con tarjeta en este momento.',
        invalid_payment_method: 'Tu banco no reconoce esta tarjeta guardada.',
        method_unavailable: 'Este medio de pago no está disponible por ahora.'
      },
      declineOther: 'Tu banco no aprobó el pago.',
      noCharge: ' No se hizo ningún cargo.',
      apiError: {
        'payment_intent.not_found': 'Este pago no existe o el enlace no es válido.',
        'payment_intent.not_confirmable': 'Este pago ya no se puede completar. Recarga la página.',
        'payment_intent.no_route': 'Este medio de pago no está disponible. Elige otro.',
        'payment_intent.blocked_by_risk': 'No pudimos procesar este pago. Intenta con otro medio de pago.',
        'payment_intent.concurrent_modification': 'El pago se estaba actualizando. Intenta de nuevo.',
        'payment_intent.invalid_tip': 'La propina no es válida.',
        'checkout.origin_unauthorized': 'Este sitio no está autorizado para cobrar a nombre del comercio.',
        'rate_limit_exceeded': 'Demasiados intentos. Espera un minuto y vuelve a intentar.'
      },
      apiErrorOther: 'No se pudo completar el pago. Intenta de nuevo.',
      loadFailed: 'No se pudo cargar el pago. ',
      // A reload of /pay/{slug} that made a new intent (data-replaced: the previous one's status).
      replaced: {
        failed: 'Tu pago anterior fue rechazado y no se hizo ningún cargo. Este es un intento de pago nuevo.',
        expired: 'La referencia de pago anterior venció sin pago. Esta es una nueva: no pagues con la anterior.',
        canceled: 'El pago anterior se canceló. Este es un intento de pago nuevo.'
      },
      newOnReload: 'Al recargar la página se creó un pago nuevo. Si ya pagaste con las instrucciones anteriores, no vuelvas a pagar.',
      status: {
        processing: 'Procesando tu pago…', requires_action: 'Completa el pago con estas instrucciones:', succeeded: 'Pago exitoso. ¡Gracias!',
        failed: 'El pago fue rechazado.', expired: 'La referencia venció sin pago.', canceled: 'El pago fue cancelado.',
        requires_payment_method: 'El pago no se completó; intenta con otro medio.'
      },
      authorized: 'Pago autorizado.', awaitingCapture: 'El comercio confirmará el cobro; no necesitas hacer nada más.',
      testMode: 'Modo de prueba', privacy: 'Aviso de privacidad', terms: 'Términos y condiciones', processedBy: 'Pago seguro procesado por Orquesta',
      tip: 'Propina', noTip: 'Sin propina', testCard: 'Tarjeta de prueba', cardToken: 'Token de tarjeta', missingCard: 'Falta la tarjeta.', pay: 'Pagar ',
      pushHint: { spei: 'Recibirás una CLABE para transferir desde tu banco.', codi: 'Recibirás un código QR para pagar con CoDi.', oxxo: 'Recibirás una referencia para pagar en efectivo en OXXO.' },
      copy: 'Copiar', copyLabel: 'Copiar CLABE', copied: 'Copiada', copyByHand: 'Cópiala a mano',
      speiHint: 'Transfiere por SPEI desde la app de tu banco el monto exacto. Tu pago se confirma en cuanto llega; esta página se actualiza sola.',
      bank: 'Banco', beneficiary: 'Beneficiario', amount: 'Monto', reference: 'Referencia (escríbela en el concepto)', refNum: 'Referencia numérica', expires: 'Vence',
      qrAlt: 'Código QR de CoDi', qrHint: 'Escanéalo con la app de tu banco. Vence ',
      cashDue: 'Monto a pagar en efectivo', barcodeAlt: 'Código de barras de la referencia ',
      oxxoSteps: function (total) {
        return ['Acude a cualquier tienda OXXO antes de la fecha límite.', 'Dile al cajero que quieres hacer un pago en efectivo con OXXO Pay.',
          'Muestra este código de barras o dicta la referencia.', 'Paga ' + total + ' en efectivo. La tienda puede cobrar una comisión.',
          'Conserva tu ticket: es tu comprobante. Tu pago se confirma en unos minutos.'];
      },
      threeDs: 'Tu banco pide confirmar el pago (3-D Secure).', authenticate: 'Autenticar',
      receiptCode: 'Tu código de compra', keepForInvoice: 'Guárdalo: con él puedes facturar tu compra.', keepAsProof: 'Guárdalo como comprobante de tu compra.',
      needInvoice: '¿Necesitas factura?', otherMethod: 'Pagar con otro medio', tryAgain: 'Intentar de nuevo',
      anotherPayment: 'Hacer otro pago'
    },
    en: {
      intl: 'en-US',
      method: { card: 'Card', spei: 'SPEI', codi: 'CoDi', oxxo: 'OXXO' },
      token: {
        tok_sim_ok: 'Approved (tok_sim_ok)', tok_sim_auth: 'Authorize only (tok_sim_auth)', tok_sim_3ds: '3-D Secure (tok_sim_3ds)',
        tok_sim_insufficient: 'Insufficient funds (tok_sim_insufficient)', tok_sim_fraud: 'Suspected fraud (tok_sim_fraud)',
        tok_sim_issuer_down: 'Issuer unavailable (tok_sim_issuer_down)', tok_sim_slow: 'Approved, slow (tok_sim_slow)'
      },
      decline: {
        insufficient_funds: 'Your card has insufficient funds.',
        suspected_fraud: 'Your bank stopped the payment for security. Call your bank or pay another way.',
        authentication_failed: "Your bank's verification (3-D Secure) was not completed.",
        issuer_unavailable: 'Your bank did not answer. Try again in a few minutes or pay another way.',
        provider_error: 'The payment processor had a problem. Try again.',
        invalid_credentials: 'This merchant cannot take cards right now.',
        invalid_payment_method: 'Your bank does not recognise this saved card.',
        method_unavailable: 'This payment method is not available at the moment.'
      },
      declineOther: 'Your bank did not approve the payment.',
      noCharge: ' You were not charged.',
      apiError: {
        'payment_intent.not_found': 'This payment does not exist or the link is not valid.',
        'payment_intent.not_confirmable': 'This payment can no longer be completed. Reload the page.',
        'payment_intent.no_route': 'This payment method is not available. Choose another.',
        'payment_intent.blocked_by_risk': 'We could not process this payment. Try another payment method.',
        'payment_intent.concurrent_modification': 'The payment was being updated. Try again.',
        'payment_intent.invalid_tip': 'The tip is not valid.',
        'checkout.origin_unauthorized': 'This site is not authorized to take payments for the merchant.',
        'rate_limit_exceeded': 'Too many attempts. Wait a minute and try again.'
      },
      apiErrorOther: 'The payment could not be completed. Try again.',
      loadFailed: 'The payment could not be loaded. ',
      replaced: {
        failed: 'Your previous payment was declined and you were not charged. This is a new payment attempt.',
        expired: 'The previous payment reference expired unpaid. This is a new one: do not pay with the old one.',
        canceled: 'The previous payment was canceled. This is a new payment attempt.'
      },
      newOnReload: 'Reloading the page created a new payment. If you already paid with the previous instructions, do not pay again.',
      status: {
        processing: 'Processing your payment…', requires_action: 'Complete the payment with these instructions:', succeeded: 'Payment successful. Thank you!',
        failed: 'The payment was declined.', expired: 'The reference expired unpaid.', canceled: 'The payment was canceled.',
        requires_payment_method: 'The payment did not go through; try another method.'
      },
      authorized: 'Payment authorized.', awaitingCapture: 'The merchant will confirm the charge; you do not need to do anything else.',
      testMode: 'Test mode', privacy: 'Privacy notice', terms: 'Terms and conditions', processedBy: 'Secure payment processed by Orquesta',
      tip: 'Tip', noTip: 'No tip', testCard: 'Test card', cardToken: 'Card token', missingCard: 'The card is missing.', pay: 'Pay ',
      pushHint: { spei: 'You will get a CLABE to transfer to from your bank.', codi: 'You will get a QR code to pay with CoDi.', oxxo: 'You will get a reference to pay in cash at OXXO.' },
      copy: 'Copy', copyLabel: 'Copy CLABE', copied: 'Copied', copyByHand: 'Copy it by hand',
      speiHint: "Send the exact amount by SPEI from your bank's app. Your payment is confirmed as soon as it arrives; this page updates by itself.",
      bank: 'Bank', beneficiary: 'Beneficiary', amount: 'Amount', reference: 'Reference (write it in the concept)', refNum: 'Numeric reference (referencia numérica)', expires: 'Expires',
      qrAlt: 'CoDi QR code', qrHint: "Scan it with your bank's app. Expires ",
      cashDue: 'Amount to pay in cash', barcodeAlt: 'Barcode of the reference ',
      oxxoSteps: function (total) {
        return ['Go to any OXXO store before the deadline.', 'Tell the cashier you want to make a cash payment with OXXO Pay.',
          'Show this barcode or read out the reference.', 'Pay ' + total + ' in cash. The store may charge a fee.',
          'Keep your ticket: it is your proof of payment. Your payment is confirmed within minutes.'];
      },
      threeDs: 'Your bank asks you to confirm the payment (3-D Secure).', authenticate: 'Authenticate',
      receiptCode: 'Your purchase code', keepForInvoice: 'Keep it: you can get an invoice (factura) with it.', keepAsProof: 'Keep it as proof of your purchase.',
      needInvoice: 'Need an invoice (factura)?', otherMethod: 'Pay another way', tryAgain: 'Try again',
      anotherPayment: 'Make another payment'
    }
  };

  /** The language of a mount: the option, else the nearest `lang` around it; English pages get English. */
  function languageOf(root, opts) {
    var lang = opts.locale || (root.closest && root.closest('[lang]') && root.closest('[lang]').getAttribute('lang')) || '';
    return /^en\b/i.test(lang) ? 'en' : 'es';
  }

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

  function money(L, minor, currency) {
    try { return new Intl.NumberFormat(L.intl, { style: 'currency', currency: currency }).format(minor / 100); }
    catch (_) { return (minor / 100).toFixed(2) + ' ' + currency; }
  }

  function when(L, iso) {
    try { return new Intl.DateTimeFormat(L.intl, { dateStyle: 'long', timeStyle: 'short' }).format(new Date(iso)); }
    catch (_) { return new Date(iso).toLocaleString(L.intl); }
  }

  function initials(name) {
    return String(name || '').split(/\s+/).filter(function (w) { return /^[A-Za-zÀ-ÿ0-9]/.test(w); }).slice(0, 2)
      .map(function (w) { return w.charAt(0).toUpperCase(); }).join('') || '·';
  }

  function copy(L, text, button) {
    function done(ok) { button.textContent = ok ? L.copied : L.copyByHand; button.setAttribute('data-copied', ok ? 'true' : 'false'); }
    function fallback() {
      var t = el('textarea', { readonly: 'readonly', class: 'orq-offscreen' });
      t.value = text;
      document.body.appendChild(t);
      t.select();
      var ok = false;
      try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
      document.body.removeChild(t);
      done(ok);
    }
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
    else fallback();
  }

  function mount(root, opts) {
    opts = opts || {};
    var id = opts.intentId || root.getAttribute('data-payment-intent');
    var secret = opts.clientSecret || root.getAttribute('data-client-secret');
    var base = (opts.baseUrl || root.getAttribute('data-base-url') || SCRIPT_BASE || '').replace(/\/+$/, '');
    var state = { method: 'card', tip: 0, config: null, polling: null, shown: null, notice: null, fresh: null };
    ensureStyles(base);
    var link = root.getAttribute('data-link');
    var L = TEXT[languageOf(root, opts)];
    function apiError(e) { return L.apiError[e.code] || L.apiErrorOther; }

    function api(method, path, body, secretOf) {
      var headers = { 'Accept': 'application/json' };
      if (method === 'GET') headers['X-Service-Client-Secret'] = secretOf || secret;
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

    function card(children) {
      return el('div', { class: 'orq-card' }, [state.notice ? el('div', { class: 'orq-notice', role: 'status', 'data-testid': 'notice', text: state.notice }) : null]
        .concat(children, [footer(state.config)]));
    }

    function header(cfg, amountMinor) {
      var logo = cfg.logo_url
        ? el('img', { class: 'orq-logo', 'data-testid': 'logo', alt: cfg.merchant_display_name, src: cfg.logo_url })
        : el('span', { class: 'orq-logo orq-initials', 'data-testid': 'logo', 'aria-hidden': 'true', text: initials(cfg.merchant_display_name) });
      return el('div', { class: 'orq-head' }, [
        el('div', { class: 'orq-brand' }, [logo, el('div', { class: 'orq-merchant', 'data-testid': 'merchant', text: cfg.merchant_display_name })]),
        cfg.concepto ? el('div', { class: 'orq-concept', text: cfg.concepto }) : null,
        el('div', { class: 'orq-amount', 'data-testid': 'amount', text: money(L, amountMinor === undefined ? cfg.amount_minor + state.tip : amountMinor, cfg.currency) }),
        cfg.test_mode ? el('div', { class: 'orq-badge', text: L.testMode }) : null
      ]);
    }

    function footer(cfg) {
      var links = [];
      if (cfg && cfg.privacy_url) links.push(el('a', { href: cfg.privacy_url, target: '_blank', rel: 'noopener', 'data-testid': 'privacy', text: L.privacy }));
      if (cfg && cfg.terms_url) links.push(el('a', { href: cfg.terms_url, target: '_blank', rel: 'noopener', 'data-testid': 'terms', text: L.terms }));
      return el('div', { class: 'orq-foot' }, [
        el('div', { 'data-testid': 'processed-by', text: L.processedBy }),
        links.length ? el('div', { class: 'orq-links' }, links) : null
      ]);
    }

    function renderForm() {
      var cfg = state.config;
      // No tip chooser on a receivable's page (B2B) or when the merchant turned tips off.
      var tips = cfg.tips_enabled !== false && cfg.tip_suggestions && cfg.tip_suggestions.length > 0;
      if (!tips) state.tip = 0;
      var tipRow = !tips ? null : el('div', { class: 'orq-tips', 'data-testid': 'tips' }, [el('span', { text: L.tip })].concat(
        [{ percent: 0, amount_minor: 0 }].concat(cfg.tip_suggestions).map(function (s) {
          return el('button', {
            type: 'button', class: 'orq-chip' + (state.tip === s.amount_minor ? ' orq-on' : ''), 'data-testid': 'tip-' + s.percent,
            text: s.percent ? s.percent + '%' : L.noTip,
            onclick: function () { state.tip = s.amount_minor; renderForm(); }
          });
        })));
      var tabs = el('div', { class: 'orq-tabs', role: 'tablist' }, cfg.allowed_methods.map(function (m) {
        return el('button', {
          type: 'button', role: 'tab', class: 'orq-tab' + (state.method === m ? ' orq-on' : ''), 'data-testid': 'method-' + m,
          text: L.method[m] || m, onclick: function () { state.method = m; renderForm(); }
        });
      }));
      var fields = el('div', { class: 'orq-fields' });
      var tokenizer = null;
      if (state.method === 'card') {
        if (cfg.test_mode) {
          var sel = el('select', { id: 'orq-token', 'data-testid': 'token-select', 'aria-label': L.testCard },
            (cfg.test_tokens || []).map(function (t) { return el('option', { value: t, text: L.token[t] || t }); }));
          fields.appendChild(el('label', { for: 'orq-token', text: L.testCard }));
          fields.appendChild(sel);
        } else if (cfg.card_tokenizer && window.OrqTokenize) {
          tokenizer = window.OrqTokenize.mount(fields, cfg.card_tokenizer); // web/tokenize.js: the card goes to the connector only
        } else {
          fields.appendChild(el('label', { for: 'orq-token', text: L.cardToken }));
          fields.appendChild(el('input', { id: 'orq-token', 'data-testid': 'token-input', autocomplete: 'off' }));
        }
      } else {
        fields.appendChild(el('p', { class: 'orq-hint', text: L.pushHint[state.method] }));
      }
      var error = el('div', { class: 'orq-error', role: 'alert', 'data-testid': 'error' });
      var pay = el('button', {
        type: 'button', class: 'orq-pay', 'data-testid': 'pay', text: L.pay + money(L, cfg.amount_minor + state.tip, cfg.currency),
        onclick: function () {
          pay.disabled = true;
          var tokenEl = root.querySelector('#orq-token');
          var token = state.method === 'card' ? (tokenEl && tokenEl.value) : state.method;
          if (!token && !(tokenizer && state.method === 'card')) { error.textContent = L.missingCard; pay.disabled = false; return; }
          state.notice = null;
          // The connector's tokenizer words its own refusals for the shopper (e.g. Conekta's message_to_purchaser).
          (tokenizer && state.method === 'card' ? tokenizer.tokenize().catch(function (te) { te.shopperMessage = te.message; throw te; }) : Promise.resolve(token))
            .then(function (tok) {
              // The 3-D Secure page sends the shopper back here (the page that confirmed).
              return api('POST', '/public/payment_intents/' + id + '/confirm', { client_secret: secret, payment_token: tok, payment_method: state.method, tip_minor: state.tip, return_url: location.href.split('#')[0] });
            })
            .then(function (pi) { state.shown = null; renderStatus(pi); poll(); })
            .catch(function (e) { error.textContent = e.shopperMessage || apiError(e); pay.disabled = false; });
        }
      });
      state.shown = 'form';
      show(card([header(cfg), tipRow, tabs, fields, error, pay]));
    }

    function row(label, value, attrs, extra) {
      var dd = el('dd', attrs || {}, extra || []);
      if (value !== undefined && value !== null) dd.insertBefore(document.createTextNode(value), dd.firstChild);
      return [el('dt', { text: label }), dd];
    }

    function instructions(na, pi) {
      if (!na) return null;
      var cfg = state.config;
      var total = money(L, pi.total_minor, pi.currency);
      if (na.type === 'bank_transfer') {
        var copyBtn = el('button', { type: 'button', class: 'orq-copy', 'data-testid': 'copy-clabe', 'aria-label': L.copyLabel, text: L.copy, onclick: function () { copy(L, na.clabe, copyBtn); } });
        return el('div', { class: 'orq-instr', 'data-testid': 'spei' }, [
          el('p', { class: 'orq-hint', text: L.speiHint }),
          el('dl', {}, [].concat(
            row(L.bank, cfg.spei_bank || 'STP', { 'data-testid': 'bank' }),
            row(L.beneficiary, na.beneficiary, { 'data-testid': 'beneficiary' }),
            row(L.amount, total, { 'data-testid': 'spei-amount' }),
            row('CLABE', null, { class: 'orq-clabe' }, [el('span', { 'data-testid': 'clabe', class: 'orq-mono', text: na.clabe }), copyBtn]),
            row(L.reference, cfg.receipt_code, { 'data-testid': 'spei-reference', class: 'orq-mono' }),
            na.referencia_numerica ? row(L.refNum, String(na.referencia_numerica), { 'data-testid': 'spei-referencia-numerica', class: 'orq-mono' }) : [],
            row(L.expires, when(L, na.expires_at), { 'data-testid': 'expires' })
          ))
        ]);
      }
      if (na.type === 'codi_qr') return el('div', { class: 'orq-instr orq-codi', 'data-testid': 'codi' }, [
        el('img', { class: 'orq-qr', 'data-testid': 'qr', alt: L.qrAlt, width: '200', height: '200', src: base + '/public/qr.svg?data=' + encodeURIComponent(na.qr_payload) }),
        el('div', { class: 'orq-hint', text: L.qrHint + when(L, na.expires_at) })
      ]);
      if (na.type === 'oxxo_voucher') return el('div', { class: 'orq-instr orq-oxxo', 'data-testid': 'oxxo' }, [
        el('div', { class: 'orq-due' }, [el('span', { text: L.cashDue }), el('strong', { 'data-testid': 'oxxo-amount', text: total })]),
        el('img', { class: 'orq-barcode', 'data-testid': 'barcode', alt: L.barcodeAlt + na.reference, src: base + '/public/barcode.svg?data=' + encodeURIComponent(na.reference) }),
        el('div', { class: 'orq-mono orq-ref', 'data-testid': 'reference', text: na.reference }),
        el('ol', { class: 'orq-steps', 'data-testid': 'cashier-steps' }, L.oxxoSteps(total).map(function (step) { return el('li', { text: step }); })),
        el('dl', {}, row(L.expires, when(L, na.expires_at), { 'data-testid': 'expires' }))
      ]);
      if (na.type === 'redirect') {
        var back = na.redirect_url + (na.redirect_url.indexOf('?') < 0 ? '?' : '&') + 'return_to=' + encodeURIComponent(location.href);
        return el('div', { class: 'orq-instr' }, [
          el('p', { text: L.threeDs }),
          el('a', { class: 'orq-pay', 'data-testid': 'redirect', href: back, text: L.authenticate })
        ]);
      }
      return null;
    }

    function receipt(cfg) {
      return el('div', { class: 'orq-receipt', 'data-testid': 'receipt' }, [
        el('div', { class: 'orq-hint', text: L.receiptCode }),
        el('div', { class: 'orq-code orq-mono', 'data-testid': 'receipt-code', text: cfg.receipt_code }),
        el('div', { class: 'orq-hint', text: cfg.self_invoice_url ? L.keepForInvoice : L.keepAsProof }),
        cfg.self_invoice_url ? el('a', { class: 'orq-pay orq-secondary', 'data-testid': 'invoice-link', href: base + cfg.self_invoice_url, text: L.needInvoice }) : null
      ]);
    }

    // A declined payment: why, in the shopper's language, and another way to pay. A failed intent cannot be paid
    // again; on /pay/{slug} a reload makes a new one (and says so); elsewhere the merchant page
    // hears `orquesta:retry` and mounts a new intent.
    function otherMethod() {
      if (link) { location.reload(); return; }
      root.dispatchEvent(new CustomEvent('orquesta:retry', { bubbles: true, detail: { paymentIntent: id } }));
    }

    function renderStatus(pi) {
      var cfg = state.config;
      var awaiting = pi.status === 'processing' && cfg.awaiting_capture;
      var key = pi.status + (awaiting ? ':auth' : '') + ':' + (pi.next_action ? pi.next_action.type : '');
      if (state.shown === key) return;
      state.shown = key;
      var text = L.status[pi.status] || L.status.processing;
      if (awaiting) text = L.authorized;
      var declined = pi.status === 'failed' || pi.status === 'requires_payment_method';
      var err = cfg.last_payment_error;
      var reason = declined && err ? (L.decline[err.code] || L.declineOther) : null;
      root.setAttribute('data-status', pi.status);
      show(card([
        header(cfg, pi.total_minor),
        el('div', { class: 'orq-result orq-' + (awaiting ? 'authorized' : pi.status), 'data-testid': 'result', 'data-status': pi.status, role: 'status', text: text }),
        reason ? el('p', { class: 'orq-reason', 'data-testid': 'decline-reason', text: reason + (pi.status === 'failed' ? L.noCharge : '') }) : null,
        awaiting ? el('p', { class: 'orq-reason', 'data-testid': 'awaiting-capture', text: L.awaitingCapture }) : null,
        pi.status === 'requires_action' ? instructions(pi.next_action, pi) : null,
        pi.status === 'succeeded' ? receipt(cfg) : null,
        pi.status === 'succeeded' && state.fresh
          ? el('button', { type: 'button', class: 'orq-pay orq-secondary', 'data-testid': 'another-payment', text: L.anotherPayment, onclick: anotherPayment })
          : null,
        pi.status === 'failed' || pi.status === 'expired' || pi.status === 'canceled'
          ? el('button', { type: 'button', class: 'orq-pay', 'data-testid': 'other-method', text: pi.status === 'failed' ? L.otherMethod : L.tryAgain, onclick: otherMethod })
          : null,
        pi.status === 'requires_payment_method'
          ? el('button', { type: 'button', class: 'orq-pay', 'data-testid': 'retry', text: L.otherMethod, onclick: function () { state.polling = null; renderForm(); } })
          : null
      ]));
    }

    // The config carries what the projection does not: the decline reason, an authorization awaiting capture.
    function refresh(pi) {
      var needsConfig = pi.status === 'failed' || pi.status === 'requires_payment_method' || pi.status === 'processing';
      if (!needsConfig) { renderStatus(pi); return Promise.resolve(); }
      return api('GET', '/public/payment_intents/' + id + '/checkout-config').then(function (cfg) { state.config = cfg; renderStatus(pi); });
    }

    function poll() {
      if (state.polling) return;
      state.polling = setInterval(function () {
        api('GET', '/public/payment_intents/' + id).then(function (pi) {
          return refresh(pi).then(function () {
            if (state.polling && (TERMINAL[pi.status] || pi.status === 'requires_payment_method')) { clearInterval(state.polling); state.polling = null; }
          });
        }).catch(function () { /* keep polling through a transient error */ });
      }, POLL_MS);
    }

    // A link page remembers, per tab, the intent it showed (sessionStorage: the 3-D Secure page and
    // a reload come back to this origin in the same tab).
    var memoryKey = 'orquesta:link:' + link;
    function remember(pid, psecret) {
      try { sessionStorage.setItem(memoryKey, JSON.stringify({ id: pid, secret: psecret })); } catch (_) { /* storage off: nothing remembered */ }
    }
    function recall() {
      try {
        var v = JSON.parse(sessionStorage.getItem(memoryKey) || 'null');
        return v && typeof v.id === 'string' && typeof v.secret === 'string' ? v : null;
      } catch (_) { return null; }
    }

    // What the page says about the visit: the single-use link's previous intent that the server
    // replaced (data-replaced), or this tab's previous intent of a reusable link that was not paid.
    function noticeFor(previousStatus) {
      var replaced = root.getAttribute('data-replaced');
      // A 3-D Secure decline can be done before the shopper is back: the new intent's page says why.
      var why = L.decline[root.getAttribute('data-replaced-reason')];
      if (replaced) return (why ? why + ' ' : '') + (L.replaced[replaced] || L.replaced.failed);
      if (!previousStatus) return null;
      return L.replaced[previousStatus] || L.newOnReload;
    }

    // A reusable link makes a new intent on every visit. A shopper whose payment in this tab went
    // through or is on its way (back from 3-D Secure, or a reload while a slow card was processed)
    // is shown that payment, with its receipt code, never a fresh form that invites a second one.
    function begin() {
      var prev = link ? recall() : null;
      if (!prev || prev.id === id) {
        if (link) remember(id, secret);
        return load(null);
      }
      return api('GET', '/public/payment_intents/' + prev.id, undefined, prev.secret).then(function (p) {
        if (UNDER_WAY[p.status]) {
          state.fresh = { id: id, secret: secret };
          id = prev.id;
          secret = prev.secret;
          root.setAttribute('data-payment-intent', id);
          return load(null);
        }
        remember(id, secret);
        return load(p.status);
      }, function () { remember(id, secret); return load(null); });
    }

    // "Make another payment" after a reusable link showed this tab's paid one: the visit's new intent.
    function anotherPayment() {
      if (!state.fresh) return;
      id = state.fresh.id;
      secret = state.fresh.secret;
      state.fresh = null;
      state.shown = null;
      state.tip = 0;
      if (state.polling) { clearInterval(state.polling); state.polling = null; }
      root.setAttribute('data-payment-intent', id);
      remember(id, secret);
      load(null);
    }

    function load(previousStatus) {
      state.notice = noticeFor(previousStatus);
      // The intent first, then the config: the config is then at least as fresh (a decline's reason
      // is written with the failed status, never after it).
      return api('GET', '/public/payment_intents/' + id)
        .then(function (p) { return api('GET', '/public/payment_intents/' + id + '/checkout-config').then(function (c) { return [c, p]; }); })
        .then(function (r) {
          state.config = r[0];
          var pi = r[1];
          if (pi.status === 'requires_payment_method' && !r[0].last_payment_error || pi.status === 'requires_confirmation') renderForm();
          else { renderStatus(pi); if (!TERMINAL[pi.status] && pi.status !== 'requires_payment_method') poll(); }
        })
        .catch(function (e) {
          show(el('div', { class: 'orq-card' }, [el('div', { class: 'orq-error', role: 'alert', 'data-testid': 'error', text: L.loadFailed + apiError(e) })]));
        });
    }

    return begin();
  }

  /** The kit's stylesheet, once per page, from the service (unless the page has it or opted out). */
  function ensureStyles(base) {
    if (SCRIPT && SCRIPT.getAttribute('data-styles') === 'none') return;
    if (document.querySelector('link[href$="/js/checkout.css"], link[data-orquesta-styles]')) return;
    var l = document.createElement('link');
    l.rel = 'stylesheet';
    l.href = base + '/js/checkout.css';
    l.setAttribute('data-orquesta-styles', '');
    (document.head || document.documentElement).appendChild(l);
  }

  window.OrquestaCheckout = { mount: mount };
  function auto() {
    var nodes = document.querySelectorAll('[data-orquesta-checkout]');
    for (var i = 0; i < nodes.length; i++) mount(nodes[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', auto); else auto();
})();
