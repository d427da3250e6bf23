import { Type } from 'typebox';
import { Nullable, pageQuery, PathId, RoleSchema, Timestamp } from '../../core/schemas.ts';

export const Organization = Type.Object({
  organization_id: Type.String({ pattern: '^org_[a-f0-9]{12}$' }),
  name: Type.String(),
  role: RoleSchema,
  created_at: Timestamp,
}, { title: 'Organization' });

export const CreateOrganizationBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { title: 'CreateOrganizationBody', additionalProperties: false },
);

export const Me = Type.Object({
  user_id: Type.String(),
  email: Nullable(Type.String()),
  created_at: Timestamp,
  authenticated_with: Type.Union([Type.Literal('api_key'), Type.Literal('user')]),
  api_key: Type.Optional(Type.Object({
    key_id: Type.String(), client_id: Type.String(), role: RoleSchema,
    scopes: Type.Array(Type.String(), { description: 'Permissions the key is narrowed to; empty: everything its role holds' }),
    allowed_ips: Type.Array(Type.String(), { description: 'Networks (CIDR) the key is accepted from; empty: any address' }),
  })),
  organizations: Type.Array(
    Type.Object({ organization_id: Type.String(), name: Type.String(), role: RoleSchema, joined_at: Timestamp }),
  ),
}, { title: 'Me' });

export const Member = Type.Object({
  user_id: Type.String(),
  email: Nullable(Type.String()),
  role: RoleSchema,
  joined_at: Timestamp,
}, { title: 'Member' });

export const ListMembersQuery = Type.Object(pageQuery(50));

export const MemberParams = Type.Object({ user_id: PathId('user_ + 12 hex') });

export const UpdateMemberBody = Type.Object({ role: RoleSchema }, { title: 'UpdateMemberBody', additionalProperties: false });
