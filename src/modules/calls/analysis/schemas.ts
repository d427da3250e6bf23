import { Type } from 'typebox';
import { PathId, Timestamp } from '../../../core/schemas.ts';
import { CallFilterFields, metadataFilterOptions } from '../schemas.ts';

export const AnalyzeCallBody = Type.Object({
  agent_version: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: "The agent version whose analysis settings to use (default: the call's)" })),
}, { title: 'AnalyzeCallBody', additionalProperties: false });

/** The list's filters (the same names, `metadata.<key>` included): each matching call with a transcript is analyzed again with its own version. */
export const AnalyzeCallsBody = Type.Object({ ...CallFilterFields }, {
  title: 'AnalyzeCallsBody', additionalProperties: false, ...metadataFilterOptions(Object.keys(CallFilterFields).length),
});

export const AnalysisJobParams = Type.Object({ job_id: PathId('caj_ + 12 hex') });

export const AnalysisJob = Type.Object({ job_id: Type.String({ description: '`caj_` + 12 hex' }) }, { title: 'AnalysisJobRef' });

export const AnalysisJobProgress = Type.Object({
  job_id: Type.String(),
  status: Type.Enum(['pending', 'running', 'completed'], { description: 'pending: calls being gathered; running: analyses under way; completed: every one ended' }),
  total: Type.Integer({ description: 'Calls to analyze (final once running)' }),
  completed: Type.Integer(),
  failed: Type.Integer(),
  pending: Type.Integer(),
  created_at: Timestamp,
}, { title: 'AnalysisJobProgress' });
