/* The sim provider's 3-D Secure step (test mode): approve or decline, then go back to the checkout. */
(function () {
  'use strict';
  var card = document.querySelector('[data-orquesta-3ds]');
  if (!card) return;
  card.addEventListener('click', function (ev) {
    var decision = ev.target && ev.target.getAttribute('data-decision');
    if (!decision) return;
    var error = card.querySelector('[data-testid="error"]');
    fetch('/sim/3ds/' + encodeURIComponent(card.getAttribute('data-ref')) + '/complete', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: decision })
    }).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      var back = card.getAttribute('data-return-to');
      if (back) { location.href = back; return; }
      var done = document.createElement('div');
      done.className = 'orq-result';
      done.textContent = 'Listo. Puedes cerrar esta ventana.';
      card.textContent = '';
      card.appendChild(done);
    }).catch(function () { if (error) error.textContent = 'No se pudo registrar tu respuesta. Intenta de nuevo.'; });
  });
})();
