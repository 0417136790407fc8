/* /demo: creates a test-mode payment link for the demo tenant and opens it. */
(function () {
  'use strict';
  var form = document.querySelector('[data-orquesta-demo]');
  if (!form) return;

  /**
   * Pesos as they are written in Mexico: a comma groups thousands, a point starts the centavos
   * ("1,500.00", "1500", "$1,500.5"). Returns centavos, or null when the text is not an amount
   * (a comma that does not group thousands, as in "150,50", is refused rather than guessed).
   */
  function centavos(text) {
    var s = String(text).replace(/\s+/g, '').replace(/^\$/, '').replace(/MXN$/i, '');
    if (!/^(\d{1,3}(,\d{3})+|\d+)(\.\d{1,2})?$/.test(s)) return null;
    var parts = s.replace(/,/g, '').split('.');
    return Number(parts[0]) * 100 + (parts[1] ? Number((parts[1] + '0').slice(0, 2)) : 0);
  }
  window.OrquestaDemo = { centavos: centavos };

  var MESSAGES = {
    'payment_intent.invalid_amount': 'Escribe un monto mayor a cero.',
    'payment_link.not_found': 'La demo no está disponible en este servidor.',
    'rate_limit_exceeded': 'Demasiados intentos. Espera un minuto y vuelve a intentar.'
  };

  // A corrected amount is no longer marked, and the old message goes.
  form.amount.addEventListener('input', function () {
    form.amount.removeAttribute('aria-invalid');
    document.querySelector('[data-testid="error"]').textContent = '';
  });

  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    var err = document.querySelector('[data-testid="error"]');
    err.textContent = '';
    var amount = centavos(form.amount.value);
    if (!amount) {
      err.textContent = 'Escribe el monto en pesos como 1,500.00: coma para los miles y punto para los centavos.';
      form.amount.setAttribute('aria-invalid', 'true');
      form.amount.focus();
      return;
    }
    form.amount.removeAttribute('aria-invalid');
    fetch('/demo/links', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ amount_minor: amount, currency: 'MXN', concepto: form.concepto.value }) })
      .then(function (r) {
        return r.json().then(function (j) {
          if (r.ok) { location.href = j.url; return; }
          err.textContent = MESSAGES[j.error && j.error.code] || 'No se pudo crear el enlace. Revisa el monto y el concepto.';
        });
      })
      .catch(function () { err.textContent = 'No hay conexión con el servidor. Intenta de nuevo.'; });
  });
})();
