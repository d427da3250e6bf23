import { Type } from 'typebox';

export const MAX_CONCURRENT_CALLS_CEILING = 100_000;

export const Limits = Type.Object({
  max_concurrent_calls: Type.Integer({ minimum: 0, description: 'Calls not yet final the organization may have at once (set by the operator)' }),
  active_calls: Type.Integer({ minimum: 0, description: 'Calls of the organization not yet final (queued, ringing, in_progress)' }),
  rate_limit_per_minute: Type.Integer({ minimum: 1, description: 'Requests a minute per API key or signed-in user' }),
}, { title: 'Limits', examples: [{ max_concurrent_calls: 10, active_calls: 3, rate_limit_per_minute: 1200 }] });
