import { Type } from 'typebox';
import { EmailAddress, Timestamp } from '../../core/schemas.ts';

export const SignInLinkBody = Type.Object(
  { email: EmailAddress({ maxLength: 320, description: 'The address to send the link to (a single-label domain such as admin@localhost included)', examples: ['admin@localhost'] }) },
  { title: 'SignInLinkBody', additionalProperties: false },
);

export const RedeemBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the link (`/sign-in?token=…`)' }) },
  { title: 'RedeemSignInLinkBody', additionalProperties: false },
);

export const Session = Type.Object({
  access_token: Type.String({ description: 'A JWT for `Authorization: Bearer`; keep it in memory only' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds the access token is valid; refresh before' }),
  email: Type.String(),
  session_expires_at: Timestamp,
}, { title: 'Session' });
