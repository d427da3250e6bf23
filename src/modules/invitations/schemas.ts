import { Type } from 'typebox';
import { EmailAddress, PathId, RoleSchema, Timestamp } from '../../core/schemas.ts';

export const INVITATION_DAYS = 7;

export const Invitation = Type.Object({
  invite_id: Type.String({ pattern: '^inv_[a-f0-9]{12}$' }),
  email: Type.String(),
  client_id: Type.String(),
  role: RoleSchema,
  invited_by: Type.String({ description: 'User id of the creator' }),
  status: Type.Enum(['pending', 'accepted', 'cancelled', 'expired']),
  created_at: Timestamp,
  expires_at: Timestamp,
}, { title: 'Invitation' });

export const InvitationList = Type.Object({ invitations: Type.Array(Invitation) }, { title: 'InvitationList' });

export const CreateInvitationBody = Type.Object(
  {
    email: EmailAddress({ maxLength: 254, description: 'The address invited (a single-label domain such as ops@mailhost included)' }),
    role: RoleSchema,
  },
  { title: 'CreateInvitationBody', additionalProperties: false },
);

export const InviteIdParams = Type.Object({ invite_id: PathId('inv_ + 12 hex') });

export const AcceptedInvitation = Type.Object({
  invitation: Invitation,
  organization_id: Type.String(),
  user_id: Type.String(),
  role: RoleSchema,
}, { title: 'AcceptedInvitation' });
