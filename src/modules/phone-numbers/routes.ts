import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { ImportPhoneNumberBody, ListPhoneNumbersQuery, PhoneNumber, PhoneNumberIdParams, UpdatePhoneNumberBody } from './schemas.ts';
import type { PhoneNumberService } from './service.ts';

const tags = ['Phone numbers'];

export function phoneNumberRoutes(service: PhoneNumberService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/phone-numbers', {
      config: { permission: 'phone_numbers:create' },
      schema: { operationId: 'importPhoneNumber',
        tags, headers: OrganizationHeader, body: ImportPhoneNumberBody,
        summary: 'Import a phone number: carrier_a (looked up in the carrier account, voice URL pointed at the platform) or sip (trunks and dispatch rule created)',
        response: { 200: envelope(PhoneNumber), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409, 502) },
      },
    }, async (req) => ({ success: true, ...(await service.import(req.ctx, req.body)) }));

    app.get('/api/phone-numbers', {
      config: { permission: 'phone_numbers:read' },
      schema: { operationId: 'listPhoneNumbers',
        tags, summary: 'List phone numbers, newest first', headers: OrganizationHeader, querystring: ListPhoneNumbersQuery,
        response: { 200: listEnvelope(PhoneNumber), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));

    app.get('/api/phone-numbers/:phone_number_id', {
      config: { permission: 'phone_numbers:read' },
      schema: { operationId: 'getPhoneNumber',
        tags, summary: 'Get a phone number', headers: OrganizationHeader, params: PhoneNumberIdParams,
        response: { 200: envelope(PhoneNumber), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.phone_number_id) }));

    app.patch('/api/phone-numbers/:phone_number_id', {
      config: { permission: 'phone_numbers:update' },
      schema: { operationId: 'updatePhoneNumber',
        tags, summary: 'Assign to an agent (agent_id), unassign (agent_id: null), or change supports_*', headers: OrganizationHeader,
        params: PhoneNumberIdParams, body: UpdatePhoneNumberBody,
        response: { 200: envelope(PhoneNumber), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, message: 'Phone number updated', data: await service.update(req.ctx, req.params.phone_number_id, req.body) }));

    app.delete('/api/phone-numbers/:phone_number_id', {
      config: { permission: 'phone_numbers:delete' },
      schema: { operationId: 'deletePhoneNumber',
        tags, headers: OrganizationHeader, params: PhoneNumberIdParams,
        summary: 'Delete a phone number (409 while assigned; 403 for another organization\'s; SIP trunks removed)',
        response: { 200: envelope(PhoneNumber), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409, 502) },
      },
    }, async (req) => ({ success: true, message: 'Phone number deleted', data: await service.delete(req.ctx, req.params.phone_number_id) }));
  };
}
