import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseAnswer } from '../src/modules/calls/analysis/prompt.ts';

/**
 * The model's answer checked against the answer's shape and the agent's structured-data schema
 * (extensions.md §13), with compiled schemas kept between answers: the same schema judges the same
 * way every time, a schema that cannot compile is refused every time, and two agents' schemas with
 * the same $id never meet.
 */
const answer = (data: unknown) => JSON.stringify({ summary: 'Booked a table.', success: true, success_reason: 'booked', sentiment: 'positive', structured_data: data });
const schema = (id: string, type: string) => ({ $id: id, type: 'object', required: ['party'], properties: { party: { type } } });

test('the same schema judges the same way on every answer', () => {
  const settings = { success_criteria: 'A booking', structured_data_schema: schema('booking', 'integer') };
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(parseAnswer(answer({ party: 4 }), settings), { answer: JSON.parse(answer({ party: 4 })) });
    const refused = parseAnswer(answer({ party: 'four' }), settings);
    assert.ok('errors' in refused && refused.errors.some((e) => /party/.test(e) && /integer/.test(e)), JSON.stringify(refused));
  }
});

test('two schemas with one $id are each their own', () => {
  const numbers = { structured_data_schema: schema('shared', 'integer') };
  const words = { structured_data_schema: schema('shared', 'string') };
  assert.ok('answer' in parseAnswer(answer({ party: 4 }), numbers));
  assert.ok('answer' in parseAnswer(answer({ party: 'four' }), words));
  assert.ok('errors' in parseAnswer(answer({ party: 'four' }), numbers));
  assert.ok('errors' in parseAnswer(answer({ party: 4 }), words));
});

test('a schema that cannot compile is refused on every answer; a broken answer is refused before it', () => {
  const broken = { structured_data_schema: { type: 'object', properties: { party: { type: 'no-such-type' } } } };
  for (let i = 0; i < 2; i++) {
    const refused = parseAnswer(answer({ party: 4 }), broken);
    assert.ok('errors' in refused && /cannot be compiled/.test(refused.errors[0]!), JSON.stringify(refused));
  }
  const notJson = parseAnswer('{"summary": ', broken);
  assert.ok('errors' in notJson && /not JSON/.test(notJson.errors[0]!));
  const wrongShape = parseAnswer(JSON.stringify({ summary: '', success: 'yes' }), {});
  assert.ok('errors' in wrongShape && wrongShape.errors.length > 0);
});
