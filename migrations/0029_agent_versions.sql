CREATE TABLE "agent_versions" (
	"client_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"version" integer NOT NULL,
	"config" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"created_by" text,
	CONSTRAINT "agent_versions_agent_id_version_pk" PRIMARY KEY("agent_id","version")
);
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "analysis" jsonb;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "traffic" jsonb;--> statement-breakpoint
ALTER TABLE "agent_versions" ADD CONSTRAINT "agent_versions_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_versions" ADD CONSTRAINT "agent_versions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_versions_client_agent_idx" ON "agent_versions" USING btree ("client_id","agent_id","version");--> statement-breakpoint
-- The agents made before versions get their current configuration as version 1, so every call's
-- version can be served (extensions.md §12); the fields are the API's editable fields.
INSERT INTO "agent_versions" ("client_id", "agent_id", "version", "config", "created_at", "created_by")
SELECT a."client_id", a."id", 1, jsonb_build_object(
  'agent_name', a."agent_name", 'language', a."language", 'stt_provider', a."stt_provider", 'stt_model', a."stt_model",
  'tts_provider', a."tts_provider", 'tts_model', a."tts_model", 'voice_id', a."voice_id", 'llm_provider', a."llm_provider",
  'llm_model', a."llm_model", 'system_prompt', a."system_prompt", 'first_message', a."first_message", 'temperature', a."temperature",
  'max_call_duration_seconds', a."max_call_duration_seconds", 'recording_enabled', a."recording_enabled",
  'tool_ids', coalesce((SELECT jsonb_agg(t."tool_id" ORDER BY t."created_at", t."tool_id") FROM "agent_tools" t WHERE t."agent_id" = a."id"), '[]'::jsonb),
  'documentation_ids', coalesce((SELECT jsonb_agg(d."document_id" ORDER BY d."created_at", d."document_id") FROM "agent_documents" d WHERE d."agent_id" = a."id"), '[]'::jsonb),
  'stt_integration_id', a."stt_integration_id", 'tts_integration_id', a."tts_integration_id", 'llm_integration_id', a."llm_integration_id",
  'interruptible', a."interruptible", 'end_call_enabled', a."end_call_enabled", 'transfer_number', a."transfer_number",
  'silence_timeout_seconds', a."silence_timeout_seconds", 'analysis', a."analysis"), a."updated_at", NULL
FROM "agents" a;
--> statement-breakpoint
-- Usage by agent_version reads its own rollup dimension; the calls counted before it ran no known version ('').
INSERT INTO "call_usage_rollups" ("client_id", "grain", "dimension", "bucket", "agent_id", "call_type", "status", "value", "calls",
  "duration_seconds", "cost", "cost_stt", "cost_llm", "cost_tts", "cost_telephony", "cost_platform", "histogram", "latency_histogram")
SELECT "client_id", "grain", 'agent_version', "bucket", "agent_id", "call_type", "status", '', "calls",
  "duration_seconds", "cost", "cost_stt", "cost_llm", "cost_tts", "cost_telephony", "cost_platform", "histogram", "latency_histogram"
FROM "call_usage_rollups" WHERE "dimension" = 'none';
