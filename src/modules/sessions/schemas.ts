import { Type } from 'typebox';
import { Timestamp } from '../../core/schemas.ts';

export const SignInLinkBody = Type.Object(
  { email: Type.String({ format: 'email', minLength: 3, maxLength: 320, description: 'The address to send the link to', examples: ['admin@localhost'] }) },
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
