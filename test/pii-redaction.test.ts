import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ibanValid, luhnValid, redactPii } from '../src/modules/data-settings/pii-redaction.ts';

// Expected texts are written by hand from the contract (extensions.md §7); card and IBAN samples are
// the networks' and banks' published test numbers.
const CASES: Array<[string, string]> = [
  ['Reach me at jane.doe+calls@example.co.uk or JOHN@Example.com.', 'Reach me at [EMAIL] or [EMAIL].'],
  ['Visa 4111 1111 1111 1111, 4111-1111-1111-1111, Mastercard 5555555555554444.', 'Visa [CARD], [CARD], Mastercard [CARD].'],
  ['Amex 378282246310005, Discover 6011111111111117.', 'Amex [CARD], Discover [CARD].'],
  ['IBAN DE89 3704 0044 0532 0130 00 and GB82WEST12345698765432.', 'IBAN [IBAN] and [IBAN].'],
  ['SSN 123-45-6789 or 078 05 1120.', 'SSN [SSN] or [SSN].'],
  ['Call +1 415 555 0100, (415) 555-0100, 415.555.0100, +442071838750 or +49 30 901820.', 'Call [PHONE], [PHONE], [PHONE], [PHONE] or [PHONE].'],
];

// What must never be taken for personal data (no false positives).
const UNTOUCHED = [
  'Card 4111 1111 1111 1112 fails the Luhn check; 1795315139694 is a timestamp in milliseconds.',
  'DE89370400440532013001 fails the IBAN check.',
  'Not SSNs: 000-12-3456, 666-12-3456, 900-12-3456, 123-00-6789.',
  'Call call_4f9K2mQ8xZ1pL7sT0bNc for agent_0123456789ab, doc_0123456789abcdef, org_9f51914aa15c.',
  'At 2026-11-24T10:15:00.000Z, 2026-11-24 10:15, Unix 1795315139, the order 12345 cost $1,234.56 or 12.50 credits (v1.2.3).',
  'ISBN 9781234567897 and a price of 4,111.11 dollars.',
];

test('personal data in transcript text is replaced by its label', () => {
  for (const [input, expected] of CASES) assert.equal(redactPii(input), expected);
});

test('ids, timestamps, prices and numbers that fail their checksums are left alone', () => {
  for (const text of UNTOUCHED) assert.equal(redactPii(text), text);
});

test('the checksums: Luhn for cards, mod 97 for IBANs', () => {
  assert.equal(luhnValid('4111111111111111'), true);
  assert.equal(luhnValid('4111111111111112'), false);
  assert.equal(luhnValid('79927398713'), true);
  assert.equal(ibanValid('GB82WEST12345698765432'), true);
  assert.equal(ibanValid('GB82 WEST 1234 5698 7654 32'), true);
  assert.equal(ibanValid('GB83WEST12345698765432'), false);
});
