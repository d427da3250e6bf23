ALTER TABLE "calls" ADD COLUMN "latency_p50_ms" integer;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "latency_p95_ms" integer;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "agent_version" integer;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "error" jsonb;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "stt_integration_id" text;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "tts_integration_id" text;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "llm_integration_id" text;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "interruptible" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "end_call_enabled" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "transfer_number" text;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "silence_timeout_seconds" integer DEFAULT 30 NOT NULL;