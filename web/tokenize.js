// Live-mode card tokenization for the checkout (issue 20; docs/routing.md "Live checkout"): the card
// fields are sent by the browser to the connector's own tokenizer (Conekta.js or Openpay.js, loaded
// from the connector), never to Orquesta; the checkout confirms with `<connector>:<token>`, which the
// service charges on that connector only. checkout.js calls OrqTokenize.mount() when the checkout
// config carries `card_tokenizer`.
(function () {
  'use strict';
  var SCRIPTS = {
    conekta: ['https://cdn.conekta.io/js/latest/conekta.js'],
    openpay: ['https://js.openpay.mx/openpay.v1.min.js', 'https://js.openpay.mx/openpay-data.v1.min.js']
  };

  function load(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement('script');
      s.src = src;
      s.onload = function () { resolve(); };
      s.onerror = function () { reject(new Error('No se pudo cargar el formulario seguro de tarjeta.')); };
      document.head.appendChild(s);
    });
  }

  function input(id, label, attrs) {
    var wrap = document.createElement('div');
    var l = document.createElement('label');
    l.htmlFor = id;
    l.textContent = label;
    var i = document.createElement('input');
    i.id = id;
    i.setAttribute('data-testid', id);
    for (var k in attrs) i.setAttribute(k, attrs[k]);
    wrap.appendChild(l);
    wrap.appendChild(i);
    return { wrap: wrap, el: i };
  }

  function mount(container, cfg) {
    var f = {
      name: input('orq-card-name', 'Nombre en la tarjeta', { autocomplete: 'cc-name' }),
      number: input('orq-card-number', 'Número de tarjeta', { autocomplete: 'cc-number', inputmode: 'numeric' }),
      month: input('orq-card-month', 'Mes (MM)', { autocomplete: 'cc-exp-month', inputmode: 'numeric', maxlength: '2' }),
      year: input('orq-card-year', 'Año (AA)', { autocomplete: 'cc-exp-year', inputmode: 'numeric', maxlength: '4' }),
      cvc: input('orq-card-cvc', 'CVC', { autocomplete: 'cc-csc', inputmode: 'numeric', maxlength: '4' })
    };
    for (var k in f) {
      // No name attribute: the fields are never part of a form submission to Orquesta.
      f[k].el.removeAttribute('name');
      container.appendChild(f[k].wrap);
    }
    var ready = (cfg.connector === 'conekta' ? window.Conekta : window.OpenPay)
      ? Promise.resolve()
      : SCRIPTS[cfg.connector].reduce(function (p, src) { return p.then(function () { return load(src); }); }, Promise.resolve());
    var v = function (x) { return f[x].el.value.replace(/\s+/g, ''); };

    function tokenize() {
      return ready.then(function () {
        return new Promise(function (resolve, reject) {
          if (cfg.connector === 'conekta') {
            window.Conekta.setPublicKey(cfg.public_key);
            window.Conekta.Token.create(
              { card: { number: v('number'), name: f.name.el.value, exp_year: v('year'), exp_month: v('month'), cvc: v('cvc') } },
              function (token) { resolve('conekta:' + token.id); },
              function (err) { reject(new Error(err.message_to_purchaser || err.message || 'Tarjeta rechazada.')); });
          } else {
            window.OpenPay.setId(cfg.merchant_id);
            window.OpenPay.setApiKey(cfg.public_key);
            window.OpenPay.setSandboxMode(!!cfg.sandbox);
            var device = window.OpenPay.deviceData ? window.OpenPay.deviceData.setup() : '';
            window.OpenPay.token.create(
              { holder_name: f.name.el.value, card_number: v('number'), cvv2: v('cvc'), expiration_month: v('month'), expiration_year: v('year').slice(-2) },
              function (resp) { resolve('openpay:' + resp.data.id + (device ? '#' + device : '')); },
              function (err) { reject(new Error((err && err.data && err.data.description) || 'Tarjeta rechazada.')); });
          }
        });
      }).then(function (token) {
        // The card number leaves the page only to the connector: clear it once tokenized.
        f.number.el.value = '';
        f.cvc.el.value = '';
        return token;
      });
    }
    return { tokenize: tokenize };
  }

  window.OrqTokenize = { mount: mount };
})();
