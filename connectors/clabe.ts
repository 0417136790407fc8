// The CLABE helpers live in formats/clabe.ts (clabe-validator behind them); kept here for the
// modules that import them from connectors/.
export { checkClabe, clabeCheckDigit, isValidClabe, makeClabe, maskClabe } from '../formats/clabe.js';
