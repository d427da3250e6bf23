import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initialTalk, talkReducer, type TalkAction, type TalkState } from '../console/src/pages/agents/talk/talkState.ts';

/**
 * The talk panel's transcript (extensions.md §11 events, in the order the runtime sends them): the
 * caller's interim words then final text on one line, the agent's line when its utterance ends.
 */
const play = (actions: TalkAction[]): TalkState => actions.reduce(talkReducer, talkReducer(initialTalk, { type: 'connecting' }));
const said = (role: 'agent' | 'user', text: string, final = true): TalkAction => ({ type: 'event', event: { type: 'transcript', role, text, final } });
const lines = (state: TalkState) => state.lines.map((line) => [line.role, line.text, line.final]);

test('interim words grow on one line, which the final text replaces', () => {
  const state = play([said('agent', 'Hello.'), said('user', 'When', false), said('user', 'When do', false), said('user', 'When do you open?')]);
  assert.deepEqual(lines(state), [['agent', 'Hello.', true], ['user', 'When do you open?', true]]);
});

test('the caller barges in: the agent\'s cut-short line goes before the words still being recognised, and no interim line is left behind', () => {
  // The runtime sends the caller's interim words while the agent speaks, then the agent's turn (what
  // it said before it stopped), then the caller's final text.
  const state = play([said('user', 'Are', false), said('agent', 'Hello, this'), said('user', 'Are you', false), said('user', 'Are you open on Saturday?'), said('agent', 'Yes.')]);
  assert.deepEqual(lines(state), [['agent', 'Hello, this', true], ['user', 'Are you open on Saturday?', true], ['agent', 'Yes.', true]]);
  assert.equal(new Set(state.lines.map((line) => line.id)).size, 3, 'each line its own key');
});
