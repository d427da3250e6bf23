import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { buildServices } from '../src/services.ts';
import { testEnv } from './helpers/env.ts';

/**
 * The app compiles a route's request validators and response serializers on the route's first use
 * (src/core/http/request-validation.ts, response-serialization.ts), so a schema that cannot compile
 * would only fail when its route is first called. Built with `compileSchemasAtBuild`, the app
 * compiles every one of them while it is built, as Fastify does by default: that build succeeding
 * is the proof they all compile.
 */
async function appWith(compileSchemasAtBuild: boolean, instrument?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const env = await testEnv();
  const services = await buildServices(env.config, env.database, { queue: env.queue, log: env.services.log });
  try {
    return await buildApp(services, { closeServices: true, compileSchemasAtBuild, instrument });
  } catch (err) {
    await services.close();
    throw err;
  }
}

const brokenBody = (app: FastifyInstance) => app.post('/api/broken-body', { config: { auth: 'public' }, schema: { body: { type: 'no-such-type' } } }, async () => ({}));
const brokenResponse = (app: FastifyInstance) =>
  app.get('/api/broken-response', { config: { auth: 'public' }, schema: { response: { 200: { type: 'object', properties: { a: { $ref: '#/no/such/schema' } } } } } }, async () => ({ a: 1 }));

describe('route schemas compile', () => {
  test("every route's validators and serializers compile when the app is built with them all compiled at once", async () => {
    const app = await appWith(true);
    try {
      const health = await app.inject({ url: '/api/health' });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: 'ok' });
    } finally {
      await app.close();
    }
  });

  test('a body schema or a response schema that cannot compile fails that build (so the test above can fail)', async () => {
    await assert.rejects(appWith(true, brokenBody));
    await assert.rejects(appWith(true, brokenResponse));
  });

  test('without it the same broken schemas build, and fail only their own route when it is called', async () => {
    const app = await appWith(false, (a) => { brokenBody(a); brokenResponse(a); });
    try {
      assert.equal((await app.inject({ method: 'POST', url: '/api/broken-body', payload: {} })).statusCode, 500);
      assert.equal((await app.inject({ url: '/api/broken-response' })).statusCode, 500);
      assert.equal((await app.inject({ url: '/api/health' })).statusCode, 200);
    } finally {
      await app.close();
    }
  });
});
