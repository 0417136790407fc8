// The few SAT catalogs (catCFDI, CFDI 4.0) Orquesta needs, checked in code because SAT's catalog
// schema (catCFDI.xsd) is not part of the XSDs the tests validate against. Values and the
// régimen/uso applicability are those of SAT's c_RegimenFiscal and c_UsoCFDI sheets (catCFDI.xls,
// columns "Física"/"Moral" and "Régimen Fiscal Receptor").

export type Persona = 'fisica' | 'moral';

/** c_RegimenFiscal: clave → description and to whom it applies. */
export const REGIMENES: Record<string, { descripcion: string; fisica: boolean; moral: boolean }> = {
  '601': { descripcion: 'General de Ley Personas Morales', fisica: false, moral: true },
  '603': { descripcion: 'Personas Morales con Fines no Lucrativos', fisica: false, moral: true },
  '605': { descripcion: 'Sueldos y Salarios e Ingresos Asimilados a Salarios', fisica: true, moral: false },
  '606': { descripcion: 'Arrendamiento', fisica: true, moral: false },
  '607': { descripcion: 'Régimen de Enajenación o Adquisición de Bienes', fisica: true, moral: false },
  '608': { descripcion: 'Demás ingresos', fisica: true, moral: false },
  '610': { descripcion: 'Residentes en el Extranjero sin Establecimiento Permanente en México', fisica: true, moral: true },
  '611': { descripcion: 'Ingresos por Dividendos (socios y accionistas)', fisica: true, moral: false },
  '612': { descripcion: 'Personas Físicas con Actividades Empresariales y Profesionales', fisica: true, moral: false },
  '614': { descripcion: 'Ingresos por intereses', fisica: true, moral: false },
  '615': { descripcion: 'Régimen de los ingresos por obtención de premios', fisica: true, moral: false },
  '616': { descripcion: 'Sin obligaciones fiscales', fisica: true, moral: false },
  '620': { descripcion: 'Sociedades Cooperativas de Producción que optan por diferir sus ingresos', fisica: false, moral: true },
  '621': { descripcion: 'Incorporación Fiscal', fisica: true, moral: false },
  '622': { descripcion: 'Actividades Agrícolas, Ganaderas, Silvícolas y Pesqueras', fisica: false, moral: true },
  '623': { descripcion: 'Opcional para Grupos de Sociedades', fisica: false, moral: true },
  '624': { descripcion: 'Coordinados', fisica: false, moral: true },
  '625': { descripcion: 'Régimen de las Actividades Empresariales con ingresos a través de Plataformas Tecnológicas', fisica: true, moral: false },
  '626': { descripcion: 'Régimen Simplificado de Confianza', fisica: true, moral: true },
};

const GASTOS = ['601', '603', '606', '612', '620', '621', '622', '623', '624', '625', '626'];
const DEDUCCIONES = ['605', '606', '608', '611', '612', '614', '607', '615', '625'];
const TODOS = ['601', '603', '605', '606', '608', '610', '611', '612', '614', '616', '620', '621', '622', '623', '624', '607', '615', '625', '626'];

/** c_UsoCFDI: clave → description, to whom it applies and the receptor régimenes it admits. */
export const USOS: Record<string, { descripcion: string; fisica: boolean; moral: boolean; regimenes: string[] }> = {
  G01: { descripcion: 'Adquisición de mercancías', fisica: true, moral: true, regimenes: GASTOS },
  G02: { descripcion: 'Devoluciones, descuentos o bonificaciones', fisica: true, moral: true, regimenes: GASTOS },
  G03: { descripcion: 'Gastos en general', fisica: true, moral: true, regimenes: GASTOS },
  I01: { descripcion: 'Construcciones', fisica: true, moral: true, regimenes: GASTOS },
  I02: { descripcion: 'Mobiliario y equipo de oficina por inversiones', fisica: true, moral: true, regimenes: GASTOS },
  I03: { descripcion: 'Equipo de transporte', fisica: true, moral: true, regimenes: GASTOS },
  I04: { descripcion: 'Equipo de computo y accesorios', fisica: true, moral: true, regimenes: GASTOS },
  I05: { descripcion: 'Dados, troqueles, moldes, matrices y herramental', fisica: true, moral: true, regimenes: GASTOS },
  I06: { descripcion: 'Comunicaciones telefónicas', fisica: true, moral: true, regimenes: GASTOS },
  I07: { descripcion: 'Comunicaciones satelitales', fisica: true, moral: true, regimenes: GASTOS },
  I08: { descripcion: 'Otra maquinaria y equipo', fisica: true, moral: true, regimenes: GASTOS },
  D01: { descripcion: 'Honorarios médicos, dentales y gastos hospitalarios', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D02: { descripcion: 'Gastos médicos por incapacidad o discapacidad', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D03: { descripcion: 'Gastos funerales', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D04: { descripcion: 'Donativos', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D05: { descripcion: 'Intereses reales efectivamente pagados por créditos hipotecarios (casa habitación)', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D06: { descripcion: 'Aportaciones voluntarias al SAR', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D07: { descripcion: 'Primas por seguros de gastos médicos', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D08: { descripcion: 'Gastos de transportación escolar obligatoria', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D09: { descripcion: 'Depósitos en cuentas para el ahorro, primas que tengan como base planes de pensiones', fisica: true, moral: false, regimenes: DEDUCCIONES },
  D10: { descripcion: 'Pagos por servicios educativos (colegiaturas)', fisica: true, moral: false, regimenes: DEDUCCIONES },
  S01: { descripcion: 'Sin efectos fiscales', fisica: true, moral: true, regimenes: TODOS },
  CP01: { descripcion: 'Pagos', fisica: true, moral: true, regimenes: TODOS },
  CN01: { descripcion: 'Nómina', fisica: true, moral: false, regimenes: ['605'] },
};

/** c_FormaPago (the ones Orquesta's payment methods produce). */
export const FORMAS_PAGO: Record<string, string> = {
  '01': 'Efectivo',
  '03': 'Transferencia electrónica de fondos',
  '04': 'Tarjeta de crédito',
  '15': 'Condonación',
  '28': 'Tarjeta de débito',
  '99': 'Por definir',
};

/**
 * Forma de pago of a charge, by the payment method that paid it and, for a card, its funding type
 * (c_FormaPago: `04` Tarjeta de crédito, `28` Tarjeta de débito — a prepaid card is a debit card for
 * SAT; a card whose funding is unknown is `04`); SPEI and CoDi are transfers (`03`); OXXO is cash
 * (`01`). Unknown methods throw: a PUE invoice cannot say `99` (SAT forbids it with PUE).
 */
export function formaPagoDeMetodo(method: string, funding?: string | null): string {
  switch (method) {
    case 'card':
      return funding === 'debit' || funding === 'prepaid' ? '28' : '04';
    case 'spei':
    case 'codi':
    case 'dimo':
      return '03';
    case 'oxxo':
      return '01';
    default:
      throw new Error(`no c_FormaPago for payment method "${method}"`);
  }
}

export const METODOS_PAGO: Record<string, string> = { PUE: 'Pago en una sola exhibición', PPD: 'Pago en parcialidades o diferido' };

/** Cancellation motives (SAT, CFDI 4.0 cancellation). `01` needs the replacing UUID (FolioSustitucion). */
export const MOTIVOS_CANCELACION: Record<string, string> = {
  '01': 'Comprobante emitido con errores con relación',
  '02': 'Comprobante emitido con errores sin relación',
  '03': 'No se llevó a cabo la operación',
  '04': 'Operación nominativa relacionada en una factura global',
};

export const TIPOS_COMPROBANTE: Record<string, string> = { I: 'Ingreso', E: 'Egreso', P: 'Pago' };

/** Default keys of a concept line when the caller gives none: "No existe en el catálogo" / "Actividad". */
export const CLAVE_PROD_SERV_DEFAULT = '01010101';
export const CLAVE_UNIDAD_DEFAULT = 'ACT';
/** The concept of a payment complement (Pagos 2.0 guide): fixed values. */
export const CONCEPTO_PAGO = { ClaveProdServ: '84111506', Cantidad: '1', ClaveUnidad: 'ACT', Descripcion: 'Pago', ValorUnitario: '0', Importe: '0', ObjetoImp: '01' } as const;
/** Credit note concept key: 84111506 "Servicios de facturación". */
export const CLAVE_PROD_SERV_NOTA_CREDITO = '84111506';
