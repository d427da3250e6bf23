import { Type } from 'typebox';
import { Nullable, PathId } from '../../core/schemas.ts';
import { AgentSchema as Agent } from '../agents/service.ts';
import { CallSchema as Call, CallVariables } from '../calls/service.ts';

export const RuntimeCallParams = Type.Object({ call_sid: PathId('call_ + 20 letters and digits') });
export const RuntimeToolParams = Type.Object({
  call_sid: PathId('call_ + 20 letters and digits'),
  tool_name: Type.String({ minLength: 1, maxLength: 100, description: "The tool's tool_name" }),
});

export const RuntimeProvider = Nullable(Type.Object({
  provider: Type.String({ description: "The agent's setting (e.g. whisper, served by an openai integration)" }),
  model: Nullable(Type.String()),
  voice_id: Type.Optional(Nullable(Type.String())),
  integration_id: Type.String({ description: 'The integration chosen: the agent\'s *_integration_id, else the newest active one of the provider' }),
  credentials: Type.Object({
    api_key: Type.String(),
    base_url: Type.Optional(Nullable(Type.String())),
    region: Type.Optional(Nullable(Type.String())),
  }, { description: 'Decrypted: returned to the call token only' }),
}, {
  title: 'RuntimeProviderSettings',
  description: 'null when the organization has no integration that can serve the provider: the runtime then ends the call failed / error with error {provider, code: not_configured, message}',
}));

export const RuntimeFunction = Type.Object({
  name: Type.String(),
  description: Type.String(),
  parameters: Type.Record(Type.String(), Type.Unknown(), { description: 'JSON Schema of the arguments (type object)' }),
}, {
  title: 'RuntimeFunction',
  examples: [{ name: 'lookup_order', description: 'Finds an order', parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] } }],
});

export const RuntimeCall = Type.Object({
  call: Call,
  agent: Agent,
  variables: CallVariables,
  providers: Type.Object({ stt: RuntimeProvider, tts: RuntimeProvider, llm: RuntimeProvider }),
  tools: Type.Array(RuntimeFunction, { description: "The agent's webhook tools as functions (the runtime adds its built-ins)" }),
}, { title: 'RuntimeCall' });

export const RuntimeToolBody = Type.Object({
  arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'What the language model called the tool with' })),
}, { title: 'RuntimeToolBody', additionalProperties: false, examples: [{ arguments: { order_id: 'A-1' } }] });

export const RuntimeToolResult = Type.Object({
  status: Nullable(Type.Integer({ description: "The webhook's HTTP status; null when it did not answer" })),
  body: Type.Unknown({ description: 'The answer: JSON as its value, other text as text (first 4 KB)' }),
  duration_ms: Type.Integer(),
  error: Nullable(Type.String({ description: 'Why there is no answer (timeout, connection refused)' })),
}, { title: 'RuntimeToolResult', examples: [{ status: 200, body: { shipped: true }, duration_ms: 180, error: null }] });
