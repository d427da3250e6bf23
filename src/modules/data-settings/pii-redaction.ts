/**
 * Personal data in transcript text, replaced before the text is stored (extensions.md §7): e-mail
 * addresses, payment card numbers, IBANs, US social security numbers and phone numbers become
 * `[EMAIL]`, `[CARD]`, `[IBAN]`, `[SSN]`, `[PHONE]`.
 *
 * Every pattern is anchored so that it cannot start or end inside a word or a longer number: ids
 * (`call_…`, `agent_…`), timestamps (ISO dates, Unix seconds and milliseconds) and prices are
 * left alone. Numbers that could be something else must prove themselves: a card number passes
 * the Luhn check and starts like a card network's numbers, an IBAN passes its mod-97 check, and a
 * phone number is written the way phone numbers are (a leading `+`, or 3-3-4 digit groups with
 * separators).
 */

/** Neither a word character nor part of a number or id runs into the match. */
const BEFORE = String.raw`(?<![\w+@.-]|\d[.,])`;
const AFTER = String.raw`(?![\w@]|[.,-]\d)`;

const EMAIL = /(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])/g;
/** 13-19 digits, in groups separated by single spaces or dashes. */
const CARD = new RegExp(`${BEFORE}\\d(?:[ -]?\\d){12,18}${AFTER}`, 'g');
/** Country code, check digits, then 11-30 letters and digits, optionally in groups of four. */
const IBAN = new RegExp(`${BEFORE}[A-Z]{2}\\d{2}(?: ?[A-Z0-9]){11,30}${AFTER}`, 'g');
/** AAA-GG-SSSS (dashes or spaces), without the never-issued areas 000, 666 and 9xx. */
const SSN = new RegExp(`${BEFORE}(?!000|666|9\\d\\d)\\d{3}([- ])(?!00)\\d{2}\\1(?!0000)\\d{4}${AFTER}`, 'g');
/** International (`+` and 8-15 digits, optionally grouped) or North American 3-3-4 with separators. */
const PHONE = new RegExp(
  [
    String.raw`(?<![\w+])\+[1-9](?:[ .-]?\(?\d\)?){7,14}${AFTER}`,
    `${BEFORE}(?:1[ .-])?(?:\\(\\d{3}\\) ?|\\d{3}[ .-])\\d{3}[ .-]\\d{4}${AFTER}`,
  ].join('|'),
  'g',
);

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Visa, Mastercard, American Express, Discover, Diners Club, JCB, UnionPay and Maestro prefixes. */
const CARD_PREFIX = /^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|6011|64[4-9]|65|35|62|5[06-9]|6[37])/;

function isCardNumber(candidate: string): boolean {
  const digits = candidate.replace(/[ -]/g, '');
  return digits.length >= 13 && digits.length <= 19 && CARD_PREFIX.test(digits) && luhnValid(digits);
}

export function ibanValid(candidate: string): boolean {
  const iban = candidate.replace(/ /g, '');
  if (iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = char >= 'A' && char <= 'Z' ? String(char.charCodeAt(0) - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

/** The text with every piece of personal data replaced by its label. */
export function redactPii(text: string): string {
  return text
    .replace(EMAIL, '[EMAIL]')
    .replace(IBAN, (match) => (ibanValid(match) ? '[IBAN]' : match))
    .replace(CARD, (match) => (isCardNumber(match) ? '[CARD]' : match))
    .replace(SSN, '[SSN]')
    .replace(PHONE, '[PHONE]');
}
