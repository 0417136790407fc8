/* The sim provider's 3-D Secure step (test mode): approve or decline, then go back to the checkout. */
(function () {
  'use strict';
  var card = document.querySelector('[data-orquesta-3ds]');
  if (!card) return;
  card.addEventListener('click', function (ev) {
    var decision = ev.target && ev.target.getAttribute('data-decision');
    if (!decision) return;
    fetch('/sim/3ds/' + encodeURIComponent(card.getAttribute('data-ref')) + '/complete', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ decision: decision })
    }).then(function () {
      var back = card.getAttribute('data-return-to');
      if (back) location.href = back; else card.innerHTML = '<div class="orq-result">Listo. Puedes cerrar esta ventana.</div>';
    });
  });
})();
