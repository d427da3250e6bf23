import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { AppError, Errors } from '../../core/errors.ts';
import { ORG_ROUTE_ERRORS, envelope, errorResponses, listEnvelope, OrganizationHeader, pageBody } from '../../core/schemas.ts';
import { csvContacts, jsonContacts } from './contacts-import.ts';
import {
  Campaign, CampaignContact, CampaignIdParams, ContactsJsonBody, ContactsUploadResult, CreateCampaignBody, ListCampaignsQuery, ListContactsQuery,
  UpdateCampaignBody,
} from './schemas.ts';
import type { CampaignService } from './service.ts';

const tags = ['Campaigns'];
/** A contacts CSV of 100,000 rows with a few variables is far below this. */
const MAX_CSV_BYTES = 64 * 1024 * 1024;

// Documented only: the form is read as it streams.
const MultipartContacts = {
  title: 'CampaignContactsUpload',
  description: 'Field file: a CSV with a header row, a phone_number column (E.164), every other column a call variable',
  examples: [{ file: '(the CSV file)' }],
};
/** The form as the OpenAPI document types it, so generated clients send a FormData with a binary file. */
const DocumentedMultipartContacts = {
  ...MultipartContacts,
  type: 'object',
  required: ['file'],
  properties: { file: { type: 'string', format: 'binary', description: 'The CSV (text/csv)' } },
};

const binary = (description: string, type: string) => ({ description, content: { [type]: { schema: { type: 'string', format: 'binary' } } } });

export function campaignRoutes(service: CampaignService): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(multipart, { limits: { fileSize: MAX_CSV_BYTES, files: 2, fields: 5, parts: 6 }, throwFileSizeLimit: true });

    app.post('/api/campaigns', {
      config: { permission: 'campaigns:create' },
      schema: { operationId: 'createCampaign', tags, headers: OrganizationHeader, body: CreateCampaignBody,
        summary: 'Create a campaign (draft): the agent, the outbound number, the schedule, the pace and the retry rule',
        response: { 200: envelope(Campaign), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Campaign created', data: await service.create(req.ctx, req.body) }));

    app.get('/api/campaigns', {
      config: { permission: 'campaigns:read' },
      schema: { operationId: 'listCampaigns', tags, headers: OrganizationHeader, querystring: ListCampaignsQuery,
        summary: 'List campaigns, newest first, each with its progress',
        response: { 200: listEnvelope(Campaign), ...errorResponses(...ORG_ROUTE_ERRORS) },
      },
    }, async (req) => pageBody(await service.list(req.ctx, req.query)));

    app.get('/api/campaigns/:campaign_id', {
      config: { permission: 'campaigns:read' },
      schema: { operationId: 'getCampaign', tags, headers: OrganizationHeader, params: CampaignIdParams,
        summary: 'Get a campaign with its progress (counts by contact status, always adding up to total)',
        response: { 200: envelope(Campaign), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => ({ success: true, data: await service.get(req.ctx, req.params.campaign_id) }));

    app.patch('/api/campaigns/:campaign_id', {
      config: { permission: 'campaigns:update' },
      schema: { operationId: 'updateCampaign', tags, headers: OrganizationHeader, params: CampaignIdParams, body: UpdateCampaignBody,
        summary: 'Change a draft or paused campaign (409 otherwise)',
        response: { 200: envelope(Campaign), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Campaign updated', data: await service.update(req.ctx, req.params.campaign_id, req.body) }));

    app.delete('/api/campaigns/:campaign_id', {
      config: { permission: 'campaigns:delete' },
      schema: { operationId: 'deleteCampaign', tags, headers: OrganizationHeader, params: CampaignIdParams,
        summary: 'Delete a draft or paused campaign and its contacts (409 otherwise); its calls stay',
        response: { 200: envelope(Campaign), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
      },
    }, async (req) => ({ success: true, message: 'Campaign deleted', data: await service.delete(req.ctx, req.params.campaign_id) }));

    app.post('/api/campaigns/:campaign_id/contacts', {
      config: { permission: 'campaigns:update', largeUpload: true, documentedBody: { 'multipart/form-data': DocumentedMultipartContacts } },
      bodyLimit: 48 * 1024 * 1024,
      schema: { operationId: 'addCampaignContacts', tags, headers: OrganizationHeader, params: CampaignIdParams,
        summary: 'Add contacts: a CSV file (multipart field file; streamed) or JSON {contacts}; each bad row is reported, the good ones are added; at most 100,000 per campaign',
        body: { content: { 'application/json': { schema: ContactsJsonBody }, 'multipart/form-data': { schema: MultipartContacts } } } as never,
        response: { 200: envelope(ContactsUploadResult), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409, 413, 415) },
      },
    }, async (req, reply) => {
      try {
        const data = req.isMultipart()
          ? await readCsvUpload(req, req.params.campaign_id, service)
          : await service.addContacts(req.ctx, req.params.campaign_id, jsonContacts((req.body as Static<typeof ContactsJsonBody>).contacts));
        return { success: true, message: `${data.accepted} contacts added`, data };
      } catch (err) {
        if (req.isMultipart()) reply.header('connection', 'close'); // the rest of a refused upload is not read
        throw err;
      }
    });

    app.get('/api/campaigns/:campaign_id/contacts', {
      config: { permission: 'campaigns:read' },
      schema: { operationId: 'listCampaignContacts', tags, headers: OrganizationHeader, params: CampaignIdParams, querystring: ListContactsQuery,
        summary: 'List the contacts in upload order, with attempts and call sids; filter by status',
        response: { 200: listEnvelope(CampaignContact), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req) => pageBody(await service.listContacts(req.ctx, req.params.campaign_id, req.query)));

    app.get('/api/campaigns/:campaign_id/results', {
      config: { permission: 'campaigns:read' },
      schema: { operationId: 'getCampaignResults', tags, headers: OrganizationHeader, params: CampaignIdParams,
        summary: 'The results as CSV (streamed): per contact its variables, final status, attempts, last call sid and outcome, duration and cost',
        response: { 200: binary('RFC 4180 CSV with a header row', 'text/csv'), ...errorResponses(...ORG_ROUTE_ERRORS, 404) },
      },
    }, async (req, reply) => {
      const results = await service.results(req.ctx, req.params.campaign_id);
      return reply.header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${results.filename}"`)
        .header('cache-control', 'private, no-store')
        .send(results.body);
    });

    for (const [action, summary] of [
      ['start', 'Start a draft campaign (409 otherwise, or with no contacts): the dialer calls within the schedule'],
      ['pause', 'Pause a running campaign: no new calls; calls in progress finish'],
      ['resume', 'Resume a paused campaign'],
      ['cancel', 'Cancel a draft, running or paused campaign: contacts not yet called are skipped; calls in progress finish'],
    ] as const) {
      app.post(`/api/campaigns/:campaign_id/${action}`, {
        config: { permission: 'campaigns:update' },
        schema: { operationId: `${action}Campaign`, tags, headers: OrganizationHeader, params: CampaignIdParams, summary,
          response: { 200: envelope(Campaign), ...errorResponses(...ORG_ROUTE_ERRORS, 404, 409) },
        },
      }, async (req) => ({ success: true, data: await service[action](req.ctx, req.params.campaign_id) }));
    }
  };
}

/** The CSV of a multipart upload, parsed as it streams; its one field is `file`. */
async function readCsvUpload(req: FastifyRequest, campaignId: string, service: CampaignService) {
  try {
    let result: Awaited<ReturnType<CampaignService['addContacts']>> | undefined;
    for await (const part of req.parts()) {
      if (part.type !== 'file' || part.fieldname !== 'file' || result) {
        if (part.type === 'file') part.file.resume();
        throw Errors.validation('Invalid contacts upload', [{ path: `body.${part.fieldname}`, message: 'only one field, the CSV file "file"' }]);
      }
      result = await service.addContacts(req.ctx, campaignId, csvContacts(part.file));
    }
    if (!result) throw Errors.validation('Invalid contacts upload', [{ path: 'body.file', message: 'a CSV file (or, as JSON, contacts) is required' }]);
    return result;
  } catch (err) {
    if (err instanceof AppError) throw err;
    if ((err as { statusCode?: number }).statusCode === 413) throw Errors.payloadTooLarge(`The file is larger than ${MAX_CSV_BYTES / 1024 / 1024} MB or has too many parts`);
    throw Errors.validation(`The multipart body is malformed: ${(err as Error).message}`, [{ path: 'body', message: 'is not well-formed multipart/form-data' }]);
  }
}
