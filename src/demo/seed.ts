import { randomInt } from 'node:crypto';
import { Switchboard } from '@switchboard/sdk';
import { SpeechSynthesizer, speakConversation, type SpokenConversation } from './speech.ts';
import { ProgressBar } from './progress.ts';

export interface SeedOptions {
  url: string;
  apiKey: string;
  orgId: string;
  calls: number;
  /** Parallel requests. */
  concurrency?: number;
  progress?: boolean;
}

export interface SeedResult {
  agentIds: string[];
  toolId: string;
  documentId: string;
  phoneNumberId: string;
  callSids: string[];
}

const DAY_MS = 86_400_000;

// A handful of conversations, each spoken once and reused by many calls (agent first, then turns alternate).
const CONVERSATIONS = [
  ['Thanks for calling Acme Plumbing, how can I help?', 'My kitchen sink is leaking.', 'I can book a plumber for tomorrow morning. Does 9 am work?', 'Yes, perfect.', 'Booked. You will get a text confirmation.'],
  ['Hello, this is the Bright Dental assistant.', 'I need to move my appointment.', 'Sure, what day suits you?', 'Friday afternoon.', 'Done: Friday at 3 pm.'],
  ['Hi, calling from Northwind about your order.', 'Is it delayed?', 'It ships today and arrives Thursday.', 'Great, thanks.'],
  ['Good morning, Acme Plumbing.', 'Do you work on weekends?', 'We do, on Saturdays from nine to one. A call-out costs eighty dollars.', 'Then please come on Saturday.', 'You are booked for Saturday at ten.', 'Thank you, goodbye.'],
];

/**
 * Fills an organization through the public API, as the voice runtime and a user would: agents, a
 * tool, a knowledge-base document, a SIP number, and finished calls over the last 30 days with
 * transcripts, costs and recordings of those transcripts spoken (eSpeak NG; caller left, agent right),
 * as long as their calls and with each turn starting where it is heard.
 */
export async function seedDemo(options: SeedOptions): Promise<SeedResult> {
  // Through the SDK, as an integrator would: retries, errors and uploads are its own.
  const sb = new Switchboard({ baseUrl: options.url, apiKey: options.apiKey, organizationId: options.orgId });

  const tool = await sb.tools.create({
    tool_name: `book_appointment_${randomInt(1e6)}`, tool_description: 'Books an appointment in the calendar',
    webhook_url: 'https://example.com/hooks/book', http_method: 'POST', timeout_seconds: 10,
    parameters: [{ name: 'time', type: 'string', description: 'ISO 8601 start', required: true }],
  });
  const document = await sb.knowledgeBase.createText({
    name: 'Opening hours and prices', text: 'We are open Monday to Friday, 8 am to 6 pm. A call-out costs 80 dollars; each further hour 45 dollars.',
  });
  const agents: Array<{ agent_id: string; recording_enabled: boolean }> = [];
  for (const [name, recording] of [['Front desk', true], ['Appointments', true], ['Order updates', false]] as const) {
    agents.push(await sb.agents.create({
      agent_name: name, recording_enabled: recording, system_prompt: `You are the ${name.toLowerCase()} assistant. Be brief and kind.`,
      first_message: 'Hello! How can I help?', tool_ids: [tool.tool_id], documentation_ids: [document.documentation_id],
    }));
  }
  const number = await sb.phoneNumbers.import({
    phone_number: `+1555${String(randomInt(1e7)).padStart(7, '0')}`, provider: 'sip', supports_inbound: true,
    sip_trunk_name: 'Demo PBX', sip_username: 'demo', sip_password: 'demo-password-1', inbound_room_name: 'demo-',
  });
  await sb.phoneNumbers.update(number.phone_number_id, { agent_id: agents[0]!.agent_id });

  // Spoken before any call is made, once each: the calls' durations and turn times come from the audio.
  const synth = new SpeechSynthesizer();
  const spoken: SpokenConversation[] = [];
  for (const lines of CONVERSATIONS) spoken.push(await speakConversation(synth, lines.map((text, turn) => ({ role: turn % 2 ? 'user' : 'agent', text }))));

  const bar = options.progress === false ? undefined : new ProgressBar('calls', options.calls);
  const callSids: string[] = [];
  let next = 0;
  const now = Date.now();
  async function worker(): Promise<void> {
    while (next < options.calls) {
      const i = next++;
      const agent = agents[i % agents.length]!;
      const start = now - randomInt(30 * DAY_MS);
      const conversation = spoken[i % spoken.length]!;
      const seconds = conversation.durationSeconds;
      const created = await sb.calls.create({
        agent_id: agent.agent_id, call_type: (['inbound', 'outbound', 'inbound', 'preview'] as const)[i % 4],
        to_number: `+1415555${String(1000 + (i % 9000)).padStart(4, '0')}`, from_number: '+14155550100',
        status: 'in_progress', start_time: new Date(start).toISOString(),
      });
      const cost = { stt: seconds * 0.01, llm: seconds * 0.02, tts: seconds * 0.015, telephony: seconds * 0.0085, platform: 0.5 };
      const round = (n: number) => Math.round(n * 10_000) / 10_000;
      await sb.calls.update(created.call_sid, {
        status: i % 11 === 5 ? 'failed' : 'completed',
        end_time: new Date(start + seconds * 1000).toISOString(),
        end_reason: (['user_hangup', 'agent_hangup', 'tool_end_call', 'silence_timeout'] as const)[i % 4],
        duration_seconds: seconds,
        transcript: conversation.turns,
        cost_breakdown: Object.fromEntries(Object.entries(cost).map(([k, v]) => [k, round(v)])) as typeof cost,
      });
      if (agent.recording_enabled) {
        await sb.calls.uploadRecording(created.call_sid, new Blob([conversation.wav]), 'audio/wav');
      }
      callSids.push(created.call_sid);
      bar?.tick();
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, Math.max(options.calls, 1)) }, worker));
  return {
    agentIds: agents.map((a) => a.agent_id), toolId: tool.tool_id, documentId: document.documentation_id,
    phoneNumberId: number.phone_number_id, callSids,
  };
}
