import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, OrganizationHeader } from '../../core/schemas.ts';
import { AcceptedInvitation, CreateInvitationBody, Invitation, InvitationList, InviteIdParams } from './schemas.ts';
import type { InvitationService } from './service.ts';

const tags = ['Invitations'];

export function invitationRoutes(service: InvitationService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/auth/organizations/invitations', {
      config: { permission: 'invitations:read' },
      schema: { operationId: 'listInvitations',
        tags, headers: OrganizationHeader, summary: 'Pending invitations of the organization, newest first: {invitations} with no envelope',
        response: { 200: InvitationList, ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => service.list(req.ctx));

    app.post('/api/auth/organizations/invitations', {
      config: { permission: 'invitations:create' },
      schema: { operationId: 'createInvitation',
        tags, headers: OrganizationHeader, body: CreateInvitationBody,
        summary: 'Invite an address with a role (not above your own); expires after 7 days; the email goes through the configured mailer',
        description: 'With an API key, the invitee may hold nothing the key lacks: a key narrowed by scopes invites only a role whose every permission it lists (403 scope_missing), and a key with allowed_ips invites no one (403 allowed_ips_too_wide).',
        response: { 200: envelope(Invitation), ...errorResponses(...ORG_ROUTE_ERRORS, 409) },
      },
    }, async (req) => ({ success: true, ...(await service.create(req.ctx, req.body)) }));

    app.delete('/api/auth/organizations/invitations/:invite_id', {
      config: { permission: 'invitations:delete' },
      schema: { operationId: 'cancelInvitation',
        tags, headers: OrganizationHeader, params: InviteIdParams, summary: 'Cancel a pending invitation (status cancelled; 409 once accepted, cancelled or expired)',
        response: { 200: envelope(Invitation), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Invitation cancelled', data: await service.cancel(req.ctx, req.params.invite_id) }));

    app.post('/api/auth/invitations/:invite_id/accept', {
      config: { auth: 'principal' },
      schema: { operationId: 'acceptInvitation',
        tags, params: InviteIdParams,
        summary: "Accept an invitation with a sign-in token (JWT) whose email is the invited address: you become a member with the invited role; another address's invitation 403; expired, cancelled or accepted 409",
        response: { 200: envelope(AcceptedInvitation), ...errorResponses(400, 401, 403, 404, 409, 500) },
      },
    }, async (req) => ({ success: true, message: 'Invitation accepted', data: await service.accept(req.principal, req.params.invite_id) }));
  };
}
