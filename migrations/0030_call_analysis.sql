CREATE TABLE "call_analysis_batches" (
	"id" text NOT NULL,
	"client_id" text NOT NULL,
	"filters" jsonb NOT NULL,
	"agent_version" integer,
	"status" text DEFAULT 'pending' NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "call_analysis_batches_client_id_id_pk" PRIMARY KEY("client_id","id")
);
--> statement-breakpoint
CREATE TABLE "call_analysis_runs" (
	"id" text NOT NULL,
	"client_id" text NOT NULL,
	"call_sid" text NOT NULL,
	"agent_version" integer,
	"trigger" text NOT NULL,
	"batch_id" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone,
	CONSTRAINT "call_analysis_runs_client_id_id_pk" PRIMARY KEY("client_id","id")
);
--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "analysis" jsonb;--> statement-breakpoint
ALTER TABLE "call_usage_rollups" ADD COLUMN "analysis_judged" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "call_usage_rollups" ADD COLUMN "analysis_succeeded" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "call_analysis_batches" ADD CONSTRAINT "call_analysis_batches_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_analysis_runs" ADD CONSTRAINT "call_analysis_runs_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "call_analysis_batches_created_idx" ON "call_analysis_batches" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "call_analysis_runs_end_key" ON "call_analysis_runs" USING btree ("client_id","call_sid","agent_version") WHERE trigger = 'call_end';--> statement-breakpoint
CREATE UNIQUE INDEX "call_analysis_runs_batch_key" ON "call_analysis_runs" USING btree ("client_id","batch_id","call_sid") WHERE batch_id IS NOT NULL;--> statement-breakpoint
-- The analysis dimensions of the calls already counted: none has an analysis yet, so each is its `none` row under value ''.
INSERT INTO "call_usage_rollups" ("client_id", "grain", "dimension", "bucket", "agent_id", "call_type", "status", "value", "calls", "duration_seconds", "cost", "cost_stt", "cost_llm", "cost_tts", "cost_telephony", "cost_platform", "histogram", "latency_histogram")
SELECT r."client_id", r."grain", d.name, r."bucket", r."agent_id", r."call_type", r."status", '', r."calls", r."duration_seconds", r."cost", r."cost_stt", r."cost_llm", r."cost_tts", r."cost_telephony", r."cost_platform", r."histogram", r."latency_histogram"
FROM "call_usage_rollups" r CROSS JOIN (VALUES ('analysis_success'), ('analysis_sentiment')) AS d(name)
WHERE r."dimension" = 'none'
ON CONFLICT DO NOTHING;
