import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { TranscriptTurn } from '../repository.ts';

/** What the model is asked for, and what is kept of its answer once it validates. */
export interface AnalysisAnswer {
  summary: string;
  success: boolean | null;
  success_reason: string | null;
  sentiment: 'positive' | 'neutral' | 'negative';
  structured_data: Record<string, unknown> | null;
}

export interface AnalysisSettingsInput {
  summary_prompt?: string | null;
  success_criteria?: string | null;
  structured_data_schema?: Record<string, unknown> | null;
}

export type ChatTurn = { role: 'system' | 'user' | 'assistant'; content: string };

// The answer's own shape; `structured_data` is checked against the agent's schema separately.
const ANSWER_SCHEMA = {
  type: 'object',
  required: ['summary', 'success', 'success_reason', 'sentiment', 'structured_data'],
  properties: {
    summary: { type: 'string', minLength: 1, maxLength: 10_000 },
    success: { type: ['boolean', 'null'] },
    success_reason: { type: ['string', 'null'], maxLength: 4000 },
    sentiment: { enum: ['positive', 'neutral', 'negative'] },
    structured_data: { type: ['object', 'null'] },
  },
};

const ROLE_NAMES: Record<TranscriptTurn['role'], string> = { agent: 'Agent', user: 'Caller', system: 'System', tool: 'Tool' };

/** The transcript as the model reads it: one line a turn, tool calls with their result. */
export function transcriptText(transcript: readonly TranscriptTurn[]): string {
  return transcript.map((turn) => {
    const tool = turn.tool ? ` [${turn.tool.name}(${JSON.stringify(turn.tool.arguments)}) → ${JSON.stringify(turn.tool.result)}]` : '';
    return `${ROLE_NAMES[turn.role] ?? turn.role}: ${turn.text}${tool}`;
  }).join('\n');
}

/** The first request: the instructions (the agent's prompts and schema) and the transcript. */
export function analysisMessages(settings: AnalysisSettingsInput, transcript: readonly TranscriptTurn[]): ChatTurn[] {
  const schema = settings.structured_data_schema ?? null;
  const system = [
    'You analyze a finished phone call between a voice agent and a caller.',
    'Answer with one JSON object and nothing else (no prose, no code fence), with exactly these keys:',
    '"summary" (string), "success" (true, false or null), "success_reason" (string or null),',
    '"sentiment" ("positive", "neutral" or "negative": the caller\'s), "structured_data" (object or null).',
    `Summary: ${settings.summary_prompt || 'summarize the call in a few sentences.'}`,
    settings.success_criteria
      ? `Success: judge whether the call met these criteria, and say why in success_reason: ${settings.success_criteria}`
      : 'Success: no criteria are set; answer null for success and success_reason.',
    schema
      ? `Structured data: extract an object that validates against this JSON Schema:\n${JSON.stringify(schema)}`
      : 'Structured data: none is asked for; answer null.',
  ].join('\n');
  return [{ role: 'system', content: system }, { role: 'user', content: `Transcript:\n${transcriptText(transcript)}` }];
}

/** The second request: the first answer and why it was refused. */
export function retryMessages(first: ChatTurn[], answer: string, errors: readonly string[]): ChatTurn[] {
  return [
    ...first,
    { role: 'assistant', content: answer },
    { role: 'user', content: `That answer is invalid:\n${errors.map((e) => `- ${e}`).join('\n')}\nAnswer again with one JSON object that fixes every error.` },
  ];
}

const describe = (errors: ErrorObject[] | null | undefined, root: string) =>
  (errors ?? []).map((e) => `${root}${e.instancePath} ${e.message ?? 'is invalid'}${e.params && 'allowedValues' in e.params ? ` (${(e.params.allowedValues as unknown[]).join(', ')})` : ''}`);

let compiledAnswerShape: ValidateFunction | undefined;
const answerShape = () => (compiledAnswerShape ??= new Ajv({ strict: false, allErrors: true }).compile(ANSWER_SCHEMA));

/**
 * Compiled structured-data schemas by their JSON text, each in an Ajv of its own (a user's schema, its
 * $id and definitions, never meets another's), or the reason it does not compile. Compiling took about
 * 17 ms of CPU an answer, a third of an analysis's; a version's schema does not change, so it is
 * compiled once. Bounded: the oldest schema goes first.
 */
const validators = new Map<string, ValidateFunction | string>();
const MAX_VALIDATORS = 256;
function structuredDataValidator(schema: object): ValidateFunction | string {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (validate === undefined) {
    try {
      validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
    } catch (err) {
      validate = (err as Error).message;
    }
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value!);
    validators.set(key, validate);
  }
  return validate;
}

/**
 * The model's text as an answer, or the reasons it is not one: JSON (a code fence around it is
 * tolerated), of the answer's shape, with `structured_data` valid against the agent's schema
 * (and null when none is set; `success` null when no criteria are).
 */
export function parseAnswer(text: string, settings: AnalysisSettingsInput): { answer: AnalysisAnswer } | { errors: string[] } {
  const body = text.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err) {
    return { errors: [`the answer is not JSON: ${(err as Error).message}`] };
  }
  const shape = answerShape();
  if (!shape(parsed)) return { errors: describe(shape.errors, 'answer') };
  const answer = parsed as unknown as AnalysisAnswer;
  const schema = settings.structured_data_schema ?? null;
  if (!schema) return { answer: { ...answer, structured_data: null, ...(settings.success_criteria ? {} : { success: null, success_reason: null }) } };
  if (answer.structured_data === null) return { errors: ['structured_data must be an object that validates against the schema, not null'] };
  const validate = structuredDataValidator(schema);
  if (typeof validate === 'string') return { errors: [`the agent's structured_data_schema cannot be compiled: ${validate}`] };
  if (!validate(answer.structured_data)) return { errors: describe(validate.errors, 'structured_data') };
  return { answer: settings.success_criteria ? answer : { ...answer, success: null, success_reason: null } };
}
