import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { CreateOrganizationBody, ListMembersQuery, Me, Member, Organization } from './schemas.ts';
import type { OrganizationService } from './service.ts';
import type { MemberService } from './members.ts';
import { MemberParams, UpdateMemberBody } from './schemas.ts';

const tags = ['Organizations'];

export function organizationRoutes(service: OrganizationService, members: MemberService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/auth/organizations', {
      config: { auth: 'principal' },
      schema: { operationId: 'createOrganization',
        tags, summary: 'Create an organization; the caller (a user signed in with a JWT; an API key is 403 user_token_required) becomes its admin', body: CreateOrganizationBody,
        response: { 200: envelope(Organization), ...errorResponses(400, 401, 403, 500) },
      },
    }, async (req) => ({ success: true, message: 'Organization created', data: await service.create(req.principal, req.body) }));

    app.get('/api/auth/me', {
      config: { auth: 'principal' },
      schema: { operationId: 'getMe',
        tags, summary: 'The calling user and the organizations they belong to',
        response: { 200: envelope(Me), ...errorResponses(401, 404, 500) },
      },
    }, async (req) => ({ success: true, data: await service.me(req.principal) }));

    app.get('/api/auth/organizations/members', {
      config: { permission: 'members:read' },
      schema: { operationId: 'listMembers',
        tags, summary: 'Members of the organization, oldest first', headers: OrganizationHeader, querystring: ListMembersQuery,
        response: { 200: listEnvelope(Member), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.listMembers(req.ctx, req.query)));

    app.patch('/api/auth/organizations/members/:user_id', {
      config: { permission: 'members:update' },
      schema: { operationId: 'updateMember',
        tags, headers: OrganizationHeader, params: MemberParams, body: UpdateMemberBody,
        summary: "Change a member's role (not above your own; the last admin cannot be demoted: 409); their keys above the new role are revoked",
        response: { 200: envelope(Member), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Member updated', data: await members.updateRole(req.ctx, req.params.user_id, req.body.role) }));

    app.delete('/api/auth/organizations/members/:user_id', {
      config: { permission: 'members:delete' },
      schema: { operationId: 'removeMember',
        tags, headers: OrganizationHeader, params: MemberParams,
        summary: 'Remove a member (the last admin cannot be removed: 409); their API keys in the organization are revoked',
        response: { 200: envelope(Member), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Member removed', data: await members.remove(req.ctx, req.params.user_id) }));
  };
}
