// Golden vectors of STP's signature, from cuenca-mx/stpmex-python @ 16cddb9 (MIT): the test
// company key of tests/conftest.py (passphrase 12345678), the cadena and `firma` of
// tests/test_auth.py, and the query signature recorded in
// tests/resources/cassettes/test_consulta_orden_por_clave_rastreo.yaml. A public test key: it
// signs nothing real.
export const CUENCA_TEST_KEY_PASSPHRASE = '12345678';
export const CUENCA_TEST_KEY = `
-----BEGIN ENCRYPTED PRIVATE KEY-----
MIICxjBABgkqhkiG9w0BBQ0wMzAbBgkqhkiG9w0BBQwwDgQIAPOngEipSGICAggA
MBQGCCqGSIb3DQMHBAi3RX0+96FhJASCAoAGX5N8jxBqlyKk8MTz/Q3a/V4fnCNA
IlPYybMbO00HbMNXw20Kn+WzK73VZtBdEf+8CBcqZMwuC0gqn5pdnOVqP0wz8MU5
AlWu0ZJpLo8npjQyV5Smrk1OvFREQ9skuJRBgYjPPTgdYmVN77ZGeFwJlf+OqOIM
JWZIFZY6z3cXn6CnaAvQ6L+/smRt1Us0gEMe1m7rln0M6m64EbOFsOonzp7/CRTd
Mmlsk93Lg8G/uwGrL3gf1TDep1yM1KKMu6pWZ+6zT26ykwNsdUg0NUCpeWeYWzDZ
KLzQ90U+/XlBPbPg/8gK6tc1dresvPbRcvNu+IJq8HbKuUkjrDeFor5Wezic3CyO
/g//2LJbJGy7Ak4V4W9J46GLD8B3fqyDz0itCBRcmlrtAXiV0azb1isD+j8LdOXN
vo/EPjLJnVdbP2RHiKKdp0Kq2FyRbigP86UujxwxfOxNN/w6m48agmVsj1uB6zBp
hn0D/MLkMtoV7NmGhayRxFXs5sO1G/lWOoR96PgNzOur8xnPzvG7ysPv9qKRO1XS
JEaGZXUUQ/sq2d6nLWMz9YLh7YVaVsRfIcUGPnmFh/bj30Pk52PodF6kN3JYftvn
ZaXgOf6E4NLpHjtYRTzyVZQamenDAlvHQwZE284hDPShuJwxFr6FOSR/GrgqbN4d
cOK898ofM+ZxkNkm5LrU3RAXR3336HU9XMky4UCV9L3CA51IlTMqt/CkddFhsjrw
W4Zo1Aj8G7FaoDm7XhkLGDwVjf0Ua1O4YHRpSgVSkrXeBgW7P4Tc+53nFns3rwxs
uzF/x9tl2+BdiDjPOhSRuoa1ypilODdpOGKNKuf0vu2jAbbzDILBYOfw
-----END ENCRYPTED PRIVATE KEY-----
`.trim();

/** The order of tests/conftest.py `orden_dict` with the client's defaults. */
export const CUENCA_ORDER = {
  institucionContraparte: '40072',
  empresa: 'TAMIZI',
  claveRastreo: 'CR1564969083',
  institucionOperante: '90646',
  monto: 1.2,
  tipoPago: 1,
  tipoCuentaOrdenante: 40,
  cuentaOrdenante: '646180110400000007',
  tipoCuentaBeneficiario: 40,
  nombreBeneficiario: 'Ricardo Sanchez',
  cuentaBeneficiario: '072691004495711499',
  rfcCurpBeneficiario: 'ND',
  conceptoPago: 'Prueba',
  referenciaNumerica: 5273144,
  topologia: 'T',
  medioEntrega: 3,
  prioridad: 0,
};

export const CUENCA_CADENA = '||40072|TAMIZI|||CR1564969083|90646|1.20|1|40||646180110400000007||40|Ricardo Sanchez|072691004495711499|ND||||||Prueba||||||5273144||T||3|0|||';
export const CUENCA_FIRMA =
  'KDNKDVVuyNt9oTXPAlofGXGH5L5IH9PAzOsx0JZFtmGlU+10QRf2RHSg0OVCnYYpu5sC3DJ6vlXuYM40+uNw0tMc0y8Dv26uO8Vv2GhOhMqaGk72LwgwgmqVg17xzjgGbJHzAzMav3fx4/3No+mSnf7vxpe4ePf6yK1yU5U28L4=';

/** consOrdEnvRastreo of CR1564969083 on 20200420 for TAMIZI, as recorded. */
export const CUENCA_CONSULTA_FIRMA =
  'pj3+C3iAwjXFsjBEeS0gSO0SMhV8T1PnmHEB4EmZHliKI/KY7TJ7DySj6JqkAVny1gddOiX8whBPutn/KpxR9kMf6FbNssRiy2ystppIKq7jcGZ0yEyCF8ZqWAMuEOWnF5sQ4Zb3tyAyMh0iEaaU/8nFf5yzs7UQiTgeinWWjvo=';

/** STP's recorded answer of that query (a returned order). */
export const CUENCA_CONSULTA_ANSWER = {
  resultado: {
    id: 1,
    ordenPago: {
      causaDevolucion: 1, claveRastreo: 'CR1564969083', claveRastreoDevolucion: '19013550', conceptoPago: 'Prueba', cuentaBeneficiario: '072691004495711499',
      cuentaOrdenante: '646180157075068123', empresa: 'TAMIZI', estado: 'D', fechaOperacion: 20200420, folioOrigen: 'CR1564969083', idEF: 7838161,
      institucionContraparte: 40072, institucionOperante: 90646, monto: 1.2, nombreBeneficiario: 'Ricardo Sanchez', prioridad: 1, referenciaNumerica: 5273144,
      rfcCurpBeneficiario: 'ND', tipoCuentaBeneficiario: 40, tipoCuentaOrdenante: 40, tipoPago: 1, topologia: 'V', tsLiquidacion: 1587197044940,
    },
  },
};
