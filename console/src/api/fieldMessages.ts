/**
 * The API's validation errors (`errors: [{path, message}]`, the messages of the JSON Schema
 * validator such as `must match pattern "^[A-Za-z]{2}…"`) said in words a person can act on. One
 * mapping for every form: `ApiError.fieldError` goes through it.
 */

// Patterns of the API's schemas, by what they ask for.
const PATTERNS: Array<[RegExp, string]> = [
  [/^\^\[A-Za-z\]\{2\}\(-\[A-Za-z\]\{2\}\)\?\$$/, 'Use a language code like EN or EN-US'],
  [/^\^\\\+\[1-9\]/, 'Use an international number with its country code, like +14155550100'],
  [/^\^\[Hh\]\[Tt\]\[Tt\]\[Pp\]/, 'Use a web address that starts with https:// or http://'],
  [/^\^\[a-zA-Z_\]\[a-zA-Z0-9_\]\*\$$|^\^\[a-zA-Z0-9_\]\+\$$/, 'Use only letters, digits and underscores (no spaces)'],
  [/^\^\[A-Za-z0-9_.-\]\+\$$/, 'Use only letters, digits, dots, dashes and underscores'],
  [/^\^\\d\{4\}-\\d\{2\}-\\d\{2\}\$$/, 'Use a date like 2025-01-31'],
  [/^\^\\d\{4\}-\\d\{2\}-\\d\{2\}\(T/, 'Use a date like 2025-01-31, or a date and time like 2025-01-31T09:30:00Z'],
  [/^\^\(\[01\]/, 'Use a time of day like 09:00 or 17:30'],
  [/^\^\[\\x20-\\x7E\]/, 'Use plain characters only (no accents, emoji or line breaks)'],
  [/^\^\[1-9\]\[0-9\]/, 'Use a whole number without leading zeros'],
  [/^\^\[a-z\]+_/, 'This is not a valid id'],
];

const FORMATS: Record<string, string> = {
  email: 'Enter an e-mail address like name@example.com',
  uri: 'Enter a full web address like https://example.com/hook',
  url: 'Enter a full web address like https://example.com/hook',
  'date-time': 'Enter a date and time like 2025-01-31T09:30:00Z',
  date: 'Use a date like 2025-01-31',
  uuid: 'This is not a valid id',
};

const TYPES: Record<string, string> = {
  string: 'Enter text', number: 'Enter a number', integer: 'Enter a whole number', boolean: 'Choose yes or no',
  array: 'Choose a list of values', object: 'This value has the wrong shape',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** One validation message in words (the raw message when it is already meant for people). */
export function humanMessage(message: string): string {
  let m: RegExpMatchArray | null;
  if ((m = message.match(/^must match pattern "(.*)"$/))) {
    return PATTERNS.find(([pattern]) => pattern.test(m![1]!))?.[1] ?? 'This value is not in the expected form';
  }
  if ((m = message.match(/^must match format "(.*)"$/))) return FORMATS[m[1]!] ?? `Enter a valid ${m[1]}`;
  if ((m = message.match(/^must NOT have fewer than (\d+) characters$/))) return Number(m[1]) <= 1 ? 'Required' : `Enter at least ${plural(Number(m[1]), 'character')}`;
  if ((m = message.match(/^must NOT have more than (\d+) characters$/))) return `Use at most ${plural(Number(m[1]), 'character')}`;
  if ((m = message.match(/^must NOT have fewer than (\d+) items$/))) return `Choose at least ${plural(Number(m[1]), 'item')}`;
  if ((m = message.match(/^must NOT have more than (\d+) items$/))) return `Choose at most ${plural(Number(m[1]), 'item')}`;
  if ((m = message.match(/^must NOT have (fewer|more) than (\d+) properties$/))) return `Use ${m[1] === 'fewer' ? 'at least' : 'at most'} ${plural(Number(m[2]), 'entry', 'entries')}`;
  if ((m = message.match(/^must be >= (-?[\d.e+]+)$/))) return `Use ${Number(m[1]).toLocaleString()} or more`;
  if ((m = message.match(/^must be > (-?[\d.e+]+)$/))) return `Use more than ${Number(m[1]).toLocaleString()}`;
  if ((m = message.match(/^must be <= (-?[\d.e+]+)$/))) return `Use ${Number(m[1]).toLocaleString()} or less`;
  if ((m = message.match(/^must be < (-?[\d.e+]+)$/))) return `Use less than ${Number(m[1]).toLocaleString()}`;
  if ((m = message.match(/^must be multiple of ([\d.e+-]+)$/))) return `Use a multiple of ${m[1]}`;
  if (/^must be equal to one of the allowed values$/.test(message)) return 'Choose one of the offered values';
  if ((m = message.match(/^must be equal to constant$/))) return 'Choose the offered value';
  if ((m = message.match(/^must be (string|number|integer|boolean|array|object)(,null)?$/))) return TYPES[m[1]!]!;
  if (/^must have required property/.test(message)) return 'Required';
  if (/^must NOT have duplicate items/.test(message)) return 'Remove the duplicates';
  if (/^must NOT have additional properties$|^is not a known field$/.test(message)) return 'This field is not accepted';
  if (/^must match (a|exactly one) schema in (anyOf|oneOf)$|^must be null$/.test(message)) return 'This value is not accepted';
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * How sure a message is about what is wrong: a nullable field refused by a pattern also fails
 * "must be null" and the union; the pattern is what the person needs to read.
 */
function specificity(message: string): number {
  if (/^must be null$|^must match (a|exactly one) schema in/.test(message)) return 0;
  if (/^must be (string|number|integer|boolean|array|object)/.test(message)) return 1;
  return 2;
}

export interface FieldIssue { path: string; message: string }

/** The field a path names: `body.agent_name` and `body.parameters.0.name` belong to `agent_name` and `parameters`. */
export const fieldOf = (path: string) => path.replace(/^(body|query|params|querystring)\.?/, '').split('.')[0] ?? '';

/** The most telling of a field's messages, in words. */
export function fieldMessage(errors: FieldIssue[], field: string): string | undefined {
  const mine = errors.filter((e) => fieldOf(e.path) === field);
  if (mine.length === 0) return undefined;
  const best = mine.reduce((a, b) => (specificity(b.message) > specificity(a.message) ? b : a));
  return humanMessage(best.message);
}

/** Every field's message once, for a form's summary (fields a form does not show are named there). */
export function allFieldMessages(errors: FieldIssue[]): Array<{ field: string; message: string }> {
  const fields = [...new Set(errors.map((e) => fieldOf(e.path)))];
  return fields.map((field) => ({ field, message: fieldMessage(errors, field)! }));
}

/**
 * Addresses the outbound rule refuses (private, loopback and link-local networks, unless the
 * operator allows them): what the person can do, and what the operator can.
 */
export const DESTINATION_REFUSED_HELP =
  'Switchboard only sends requests to public internet addresses. Use a public https address; or, if you run this server, allow the private network with the ALLOWED_NETWORKS setting (for example ALLOWED_NETWORKS=10.0.0.0/8).';
