// Secrets, full CLABEs and phone numbers never reach a log line (architecture invariant 8), even
// inside a message or an error text where no field name says what they are.
import t from 'tap';
import { redact } from '../kernel/log.js';

t.test('log redaction masks keys, CLABEs and phone numbers inside any text', async (t) => {
  const line = JSON.stringify(redact({
    msg: 'STP refused order for 646180157000000004 (beneficiary phone 5512345678) with key sk_live_abcdefghijklmnopqrstuvwx',
    err: new Error('cuenta 012180001234567897 invalida'),
    nested: { note: ['tel 3312349876'] },
    clabe: '646180157000000004',
    phone_number: '5512345678',
  }));
  t.notMatch(line, /646180157000000004|012180001234567897/, 'no full CLABE');
  t.notMatch(line, /5512345678|3312349876/, 'no full phone');
  t.notMatch(line, /sk_live_abc/, 'no key');
  t.match(line, /\*{14}0004/, 'a CLABE keeps its last four digits');
  t.match(line, /55\*{4}5678/, 'a phone shows two digits, asterisks, the last four');
  t.match(redact('amount 150000 of 1234') as string, /150000 of 1234/, 'ordinary numbers stay');
});
