import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';
import { EMAIL_PATTERN } from './email.ts';
import { ROLES } from './permissions.ts';

/** Shapes shared by every route, so the OpenAPI document and the responses cannot drift. */

export const ErrorBody = Type.Object(
  {
    detail: Type.String({ description: 'For people' }),
    code: Type.String({ description: 'Stable snake_case word for programs' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description: 'Request-validation failures, field by field',
      }),
    ),
  },
  { $id: 'Error', title: 'Error' },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (validation, cursor, missing X-Organization-Id)',
  401: 'Missing or invalid credential',
  403: 'Not allowed (role, organization)',
  404: 'Not found',
  409: 'Conflict with the current state',
  413: 'Payload too large',
  415: 'Unsupported media type',
  416: 'Range not satisfiable',
  429: 'Rate limited',
  500: 'Internal server error',
  502: 'A provider the request depends on refused or did not answer',
  503: 'Service unavailable',
};

/** Response entries for the given error statuses, all rendering the error body. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) {
    out[status] = Type.Ref('Error', { description: ERROR_DESCRIPTIONS[status] ?? 'Error' }) as TSchema;
  }
  return out;
}

/** Errors every organization-scoped route can answer with. */
export const ORG_ROUTE_ERRORS = [400, 401, 403, 500];

export const Timestamp = Type.String({ format: 'date-time' });

/**
 * An id in a path. Its format is not validated: an id of the wrong shape names nothing, so it is
 * simply 404 like any unknown id (decisions.md §1), never a 400.
 */
export const PathId = (description: string) => Type.String({ description });

/** An e-mail address; a single-label domain (`admin@localhost`) included (src/core/email.ts). */
export const EmailAddress = (options: { maxLength: number; description?: string; examples?: string[] }) =>
  Type.String({ pattern: EMAIL_PATTERN, minLength: 3, ...options });

/** A phone number in E.164 (decisions.md §1). */
export const E164 = Type.String({ pattern: '^\\+[1-9]\\d{1,14}$', description: 'E.164, e.g. +14155550100' });

/** A role, built from the one list of roles so a new role cannot be missed here. */
export const RoleSchema = Type.Enum([...ROLES], { description: 'admin > agent_manager > user' });
/**
 * `T or null`. A scalar becomes `type: [T, 'null']` rather than `anyOf`: the response serializer
 * handles a type list with a typeof check, but tries each `anyOf` branch with the validator, which
 * costs a validation per nullable field per row of every list.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && type !== 'object' && type !== 'array') {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  }
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));
}
export const NullableTimestamp = Nullable(Type.String({ format: 'date-time' }));

/** The name a schema goes by in the OpenAPI document (its `title`), if it has one. */
const nameOf = (schema: TSchema): string | undefined => (schema as { title?: string }).title;

/**
 * The success envelope around `data`. It is a named schema of the OpenAPI document: `<Data>Response`
 * (or `<Item>ArrayResponse` around an array), or `name` when given.
 */
export function envelope<T extends TSchema>(data: T, name?: string) {
  const item = (data as { items?: TSchema }).items;
  const title = name ?? (nameOf(data) ? `${nameOf(data)}Response` : item && nameOf(item) ? `${nameOf(item)}ArrayResponse` : undefined);
  return Type.Object({ success: Type.Boolean(), message: Type.Optional(Type.String()), data }, title ? { title } : {});
}

export const Pagination = Type.Object({
  next_cursor: Nullable(Type.String()),
  has_more: Type.Boolean(),
  page_size: Type.Integer(),
  total_count: Type.Optional(Type.Integer()),
}, { title: 'Pagination' });

/** A page of a list: `<Item>List` in the OpenAPI document. */
export function listEnvelope<T extends TSchema>(item: T) {
  return Type.Object({ success: Type.Boolean(), data: Type.Array(item), pagination: Pagination }, nameOf(item) ? { title: `${nameOf(item)}List` } : {});
}

export const MessageEnvelope = Type.Object({ success: Type.Boolean(), message: Type.String() }, { title: 'Message' });

/** Query of lists paged with `page_size` (agents, keys, documents...). */
export function pageQuery(defaultSize: number) {
  return {
    page_size: Type.Integer({ minimum: 1, maximum: 100, default: defaultSize }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page' })),
  };
}

export const OrganizationHeader = Type.Object({
  'x-organization-id': Type.Optional(Type.String({ description: 'Organization the request acts in (required)' })),
});

/** Renders a page from a service as the list envelope. */
export function pageBody<T>(page: { items: T[]; nextCursor: string | null; hasMore: boolean; totalCount?: number }) {
  return {
    success: true,
    data: page.items,
    pagination: {
      next_cursor: page.nextCursor,
      has_more: page.hasMore,
      page_size: page.items.length,
      ...(page.totalCount === undefined ? {} : { total_count: page.totalCount }),
    },
  };
}

export function iso(value: Date): string;
export function iso(value: Date | null): string | null;
export function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}
