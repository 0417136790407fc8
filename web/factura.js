// Self-invoice page: sends the form to POST /public/factura/{slug} and shows the stamped CFDI with
// its downloads, or a clear message in Spanish for each error code.
(function () {
  'use strict';
  var form = document.querySelector('[data-orquesta-factura]');
  if (!form) return;
  var slug = form.getAttribute('data-slug');
  var errorBox = document.querySelector('[data-testid="error"]');
  var ok = document.querySelector('[data-testid="factura-ok"]');
  var button = form.querySelector('button[type="submit"]');

  var MESSAGES = {
    'autofactura.invalid_body': 'Completa los campos obligatorios: código del ticket, RFC, nombre, código postal, régimen fiscal y uso del CFDI.',
    'autofactura.invalid_rfc': 'El RFC no tiene el formato del SAT: 12 caracteres para personas morales o 13 para personas físicas (por ejemplo XAXX010101000).',
    'autofactura.not_available': 'La facturación en línea no está disponible para este comercio.',
    'autofactura.receipt_not_found': 'No encontramos un ticket pagado con ese código para ese RFC. Revisa el código (W-XXXXX) que viene en tu ticket; si ya lo facturaste, usa el mismo RFC.',
    'invoice.receptor_incoherente': 'Con el RFC genérico XAXX010101000 o XEXX010101000 el nombre debe ser «PUBLICO EN GENERAL», el régimen 616 y el uso S01.',
    'invoice.invalid_receptor': 'Los datos fiscales no son válidos: ',
    'invoice.pac_error': 'El proveedor de certificación (PAC) rechazó la factura: ',
    'invoice.pac_unreachable': 'El proveedor de certificación no respondió. Intenta de nuevo en unos minutos.',
    'invoice.pac_bad_response': 'El proveedor de certificación dio una respuesta que no pudimos leer. Intenta de nuevo.',
    'invoice.pac_no_uuid': 'El proveedor de certificación no devolvió el folio fiscal. Intenta de nuevo.',
    'invoice.fiscal_profile_missing': 'El comercio aún no configura su facturación.',
    'invoice.concurrent_modification': 'Tu factura se está generando en este momento. Vuelve a intentar en unos segundos para descargarla.',
    'rate_limit_exceeded': 'Demasiados intentos. Espera un minuto y vuelve a intentar.',
  };
  var FIELD_OF = {
    'autofactura.invalid_rfc': 'rfc',
    'autofactura.receipt_not_found': 'receipt_code',
    'invoice.receptor_incoherente': 'nombre',
  };

  function field(name) { return form.querySelector('[name="' + name + '"]'); }
  function clear() {
    errorBox.textContent = '';
    Array.prototype.forEach.call(form.querySelectorAll('[aria-invalid]'), function (el) { el.removeAttribute('aria-invalid'); });
  }
  function fail(code, message) {
    var text = MESSAGES[code];
    if (code === 'invoice.invalid_receptor' || code === 'invoice.pac_error') text += message || '';
    errorBox.textContent = text || ('No se pudo generar la factura (' + (code || 'error') + ').');
    var f = FIELD_OF[code] && field(FIELD_OF[code]);
    if (f) { f.setAttribute('aria-invalid', 'true'); f.focus(); }
  }
  function money(minor) { return '$' + (minor / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',') + ' MXN'; }

  // A field the shopper corrects is no longer marked.
  form.addEventListener('input', function (ev) { if (ev.target && ev.target.removeAttribute) ev.target.removeAttribute('aria-invalid'); });
  form.addEventListener('change', function (ev) { if (ev.target && ev.target.removeAttribute) ev.target.removeAttribute('aria-invalid'); });

  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    clear();
    var body = {};
    ['receipt_code', 'rfc', 'nombre', 'cp', 'regimen_fiscal', 'uso_cfdi', 'email'].forEach(function (n) {
      var v = (field(n).value || '').trim();
      if (n === 'receipt_code' || n === 'rfc' || n === 'nombre') v = v.toUpperCase();
      if (v) body[n] = v;
    });
    var missing = ['receipt_code', 'rfc', 'nombre', 'cp', 'regimen_fiscal', 'uso_cfdi'].filter(function (n) { return !body[n]; });
    if (missing.length) {
      missing.forEach(function (n) { field(n).setAttribute('aria-invalid', 'true'); });
      field(missing[0]).focus();
      errorBox.textContent = MESSAGES['autofactura.invalid_body'];
      return;
    }
    button.disabled = true;
    button.textContent = 'Generando factura…';
    fetch('/public/factura/' + encodeURIComponent(slug), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (j) { return { status: r.status, json: j }; }); })
      .then(function (res) {
        if (res.status >= 400) { var e = res.json.error || {}; fail(e.code, e.message); return; }
        var inv = res.json;
        var q = '?receipt_code=' + encodeURIComponent(body.receipt_code) + '&rfc=' + encodeURIComponent(body.rfc);
        ok.querySelector('[data-field="uuid"]').textContent = inv.uuid_fiscal;
        ok.querySelector('[data-field="folio"]').textContent = [inv.serie, inv.folio].filter(Boolean).join('-');
        ok.querySelector('[data-field="total"]').textContent = money(inv.total_minor);
        ok.querySelector('[data-testid="download-pdf"]').href = '/public/factura/' + encodeURIComponent(slug) + '/cfdi' + q + '&format=pdf';
        ok.querySelector('[data-testid="download-xml"]').href = '/public/factura/' + encodeURIComponent(slug) + '/cfdi' + q + '&format=xml';
        ok.hidden = false;
        form.hidden = true;
      })
      .catch(function () { errorBox.textContent = 'No hay conexión. Revisa tu internet e intenta de nuevo.'; })
      .then(function () { button.disabled = false; button.textContent = 'Generar factura'; });
  });
})();
