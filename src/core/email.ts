/**
 * The e-mail addresses the server takes, in request bodies and in ADMIN_EMAIL alike: a dot-atom local
 * part (RFC 5322, as JSON Schema's `email` format has it) and a domain of one or more DNS labels.
 * Unlike the `email` format, a single-label domain is an address: the first run's own admin is
 * `admin@localhost`, and intranet servers have users like `ops@mailhost`; such a user must be able to
 * ask for a sign-in link and be invited.
 */
const LOCAL_PART = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
export const EMAIL_PATTERN = `^${LOCAL_PART}@${LABEL}(?:\\.${LABEL})*$`;

const EMAIL = new RegExp(EMAIL_PATTERN);

export function isEmailAddress(value: string): boolean {
  return EMAIL.test(value);
}
