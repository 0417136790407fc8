/* /demo: creates a test-mode payment link for the demo tenant and opens it. */
(function () {
  'use strict';
  var form = document.querySelector('[data-orquesta-demo]');
  if (!form) return;
  form.addEventListener('submit', function (ev) {
    ev.preventDefault();
    var amount = Math.round(parseFloat(String(form.amount.value).replace(',', '.')) * 100);
    var err = document.querySelector('[data-testid="error"]');
    fetch('/demo/links', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ amount_minor: amount, currency: 'MXN', concepto: form.concepto.value }) })
      .then(function (r) { return r.json().then(function (j) { if (!r.ok) throw new Error(j.error ? j.error.message : 'HTTP ' + r.status); return j; }); })
      .then(function (link) { location.href = link.url; })
      .catch(function (e) { err.textContent = e.message; });
  });
})();
