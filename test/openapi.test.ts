import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileErrors, validate } from '@readme/openapi-parser';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import spectralRulesets from '@stoplight/spectral-rulesets';

// CommonJS packages: their named exports are read from the default export.
const { Document, Spectral } = spectralCore;
const { Json } = spectralParsers;
const { oas } = spectralRulesets;
import { testEnv } from './helpers/env.ts';

type Operation = { operationId?: string; tags?: string[]; summary?: string; description?: string; requestBody?: { content: Record<string, { schema?: Record<string, unknown> }> }; responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }> };

async function openapi() {
  const { app } = await testEnv();
  return (await app.inject({ url: '/api/openapi.json' })).json() as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Record<string, unknown>> } };
}

describe('the OpenAPI document, made for machines', () => {
  test('it validates as OpenAPI 3.1 (@readme/openapi-parser)', async () => {
    const result = await validate(structuredClone(await openapi()) as never);
    assert.ok(result.valid, result.valid ? '' : compileErrors(result));
  });

  test("it lints clean under Spectral's OpenAPI ruleset: no error, no warning", async () => {
    const spectral = new Spectral();
    spectral.setRuleset(oas as never);
    const results = await spectral.run(new Document(JSON.stringify(await openapi(), null, 2), Json));
    const problems = results.filter((r) => r.severity <= 1).map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`);
    assert.deepEqual(problems, []);
  });

  test('every operation has a unique operationId, a tag and a description; every request and response body is a named component', async () => {
    const doc = await openapi();
    const ids = new Set<string>();
    const inline: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.match(op.operationId ?? '', /^[a-z][A-Za-z]+$/, `${where} operationId`);
        assert.ok(!ids.has(op.operationId!), `${op.operationId} is used twice`);
        ids.add(op.operationId!);
        assert.ok(op.tags?.length === 1, `${where} has one tag`);
        assert.ok(op.description, `${where} has a description`);
        const bodies = [
          ...Object.values(op.requestBody?.content ?? {}).map((c) => ['request', c.schema] as const),
          ...Object.entries(op.responses).flatMap(([status, r]) => Object.values(r.content ?? {}).map((c) => [status, c.schema] as const)),
        ];
        for (const [which, schema] of bodies) {
          const isNamed = typeof schema?.$ref === 'string' || (schema as { type?: string })?.type === 'string'; // binary and HTML bodies are plain strings
          if (!isNamed) inline.push(`${where} ${which}`);
        }
      }
    }
    assert.deepEqual(inline, []);
    for (const name of ['Agent', 'AgentSummary', 'Call', 'CallSummary', 'Document', 'Error', 'Pagination']) assert.ok(doc.components.schemas[name], `${name} component`);
  });

  test('every named schema has an example that it accepts', async () => {
    const doc = await openapi();
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      assert.ok(Array.isArray(schema.examples) && schema.examples.length > 0, `${name} has an example`);
    }
  });
});
