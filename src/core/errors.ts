/**
 * The one error catalogue. Services throw these; the error handler renders them as
 * `{detail, code, errors?}` with the status of `spec/decisions.md`. Nothing else writes error bodies.
 */
export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  override name = 'AppError';
  readonly status: number;
  readonly code: string;
  readonly errors: FieldError[] | undefined;
  /** Extra response headers (e.g. Retry-After on 429). */
  readonly headers: Record<string, string> | undefined;

  /** `options.cause`: the provider's or the database's error behind this one, kept for the log. */
  constructor(status: number, code: string, detail: string, errors?: FieldError[], headers?: Record<string, string>, options?: ErrorOptions) {
    super(detail, options);
    this.status = status;
    this.code = code;
    this.errors = errors;
    this.headers = headers;
  }

  get detail(): string {
    return this.message;
  }
}

/**
 * Codes that code branches on (a conflict one caller expects and handles): thrown and matched through
 * these constants, never as free strings, so a renamed code cannot silently stop matching.
 */
export const ErrorCodes = {
  /** A call with this call_sid (or carrier sid) exists already. */
  callExists: 'call_exists',
  /** The call has ended; its report cannot change it. */
  callFinalized: 'call_finalized',
} as const;

/** Whether `err` is the catalogue's error with this code. */
export function isAppError(err: unknown, code: (typeof ErrorCodes)[keyof typeof ErrorCodes]): err is AppError {
  return err instanceof AppError && err.code === code;
}

export const Errors = {
  validation: (detail: string, errors?: FieldError[]) => new AppError(400, 'validation_error', detail, errors),
  badRequest: (detail: string, code = 'bad_request') => new AppError(400, code, detail),
  invalidCursor: () => new AppError(400, 'invalid_cursor', 'The cursor is not valid for this list'),
  /** `field`: the request field holding the refused URL, reported with the rule it breaks. */
  destinationRefused: (detail: string, field?: string) =>
    new AppError(400, 'destination_refused', `The webhook destination is not allowed: ${detail}`, field
      ? [{ path: field, message: `is refused by the outbound address rule (public addresses only, unless ALLOWED_NETWORKS covers it): ${detail}` }]
      : undefined),
  organizationRequired: () =>
    new AppError(400, 'organization_required', 'The X-Organization-Id header is required'),

  unauthenticated: () =>
    new AppError(401, 'unauthenticated', 'Authentication required: send X-API-Key or Authorization: Bearer <token>'),
  metricsTokenRequired: () => new AppError(401, 'unauthenticated', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>'),
  invalidApiKey: () => new AppError(401, 'invalid_api_key', 'The API key is invalid, revoked or expired'),
  invalidToken: (reason: string) => new AppError(401, 'invalid_token', `The bearer token is not valid: ${reason}`),
  signInLinkInvalid: () => new AppError(401, 'sign_in_link_invalid', 'The sign-in link is invalid, already used or expired: ask for a new one'),
  sessionInvalid: () => new AppError(401, 'session_invalid', 'The session has ended: sign in again'),

  forbidden: (detail: string) => new AppError(403, 'forbidden', detail),
  organizationForbidden: () =>
    new AppError(403, 'organization_forbidden', 'The credential does not give access to this organization'),
  permissionDenied: (permission: string, role: string) =>
    new AppError(403, 'permission_denied', `Role ${role} lacks the permission ${permission}`),
  /** A carrier webhook without the carrier's valid signature (extensions.md §2). */
  signatureInvalid: () => new AppError(403, 'signature_invalid', 'The request does not carry a valid X-Twilio-Signature'),
  linkInvalid: () => new AppError(403, 'link_invalid', 'The link signature is not valid'),
  linkExpired: () => new AppError(403, 'link_expired', 'The link has expired'),
  /** An API key narrowed by `scopes` lacks the route's permission (extensions.md §6). */
  scopeMissing: (permission: string) => new AppError(403, 'scope_missing', `The API key's scopes do not include ${permission}`),
  /** A key asked to hand on (to a new key or an invited member) permissions its own scopes do not include. */
  scopeNotGrantable: (detail: string) => new AppError(403, 'scope_missing', detail),
  /** A key with `allowed_ips` asked to hand on access from addresses outside them. */
  allowedIpsTooWide: (detail: string) => new AppError(403, 'allowed_ips_too_wide', detail),
  /** An API key with `allowed_ips` used from another address. */
  ipNotAllowed: () => new AppError(403, 'ip_not_allowed', "The request's address is not in the API key's allowed_ips"),
  userTokenRequired: () =>
    new AppError(403, 'user_token_required', 'This is done by a signed-in user: send Authorization: Bearer <token>, not an API key'),
  crossSiteRequest: () => new AppError(403, 'cross_site_request', 'This form accepts posts from its own page only'),
  roleTooHigh: (what: string) => new AppError(403, 'role_too_high', `The ${what} is above the caller's role`),

  notFound: (resource: string) => new AppError(404, 'not_found', `${resource} not found`),
  recordingDeleted: () => new AppError(404, 'recording_deleted', "The recording was deleted by the organization's retention policy"),
  routeNotFound: (method: string, url: string) => new AppError(404, 'route_not_found', `Route ${method} ${url} not found`),

  conflict: (code: string, detail: string, options?: ErrorOptions) => new AppError(409, code, detail, undefined, undefined, options),
  requestTimeout: () => new AppError(408, 'request_timeout', 'The request was not received in time'),
  payloadTooLarge: (detail: string) => new AppError(413, 'payload_too_large', detail),
  uriTooLong: () => new AppError(414, 'uri_too_long', 'A part of the path is too long'),
  headersTooLarge: () => new AppError(431, 'headers_too_large', 'The request headers are too large'),
  unsupportedMediaType: (detail: string) => new AppError(415, 'unsupported_media_type', detail),
  rangeNotSatisfiable: (size: number) =>
    new AppError(416, 'range_not_satisfiable', `The requested range is outside the ${size} bytes of the file`, undefined, { 'content-range': `bytes */${size}` }),
  rateLimited: (retryAfterSeconds: number) =>
    new AppError(429, 'rate_limited', 'Too many requests', undefined, { 'retry-after': String(retryAfterSeconds) }),
  /** The organization has as many calls active as its `max_concurrent_calls` (extensions.md §6). */
  concurrencyLimit: (limit: number, retryAfterSeconds: number) =>
    new AppError(429, 'concurrency_limit', `The organization already has its limit of ${limit} active calls`, undefined, { 'retry-after': String(retryAfterSeconds) }),
  /** A provider the request depends on (carrier, SIP server, payment provider) refused or did not answer. */
  upstream: (code: string, detail: string, options?: ErrorOptions) => new AppError(502, code, detail, undefined, undefined, options),
  unavailable: (detail: string, options?: ErrorOptions) => new AppError(503, 'unavailable', detail, undefined, undefined, options),
  internal: (options?: ErrorOptions) => new AppError(500, 'internal_error', 'Internal server error', undefined, undefined, options),
} as const;
