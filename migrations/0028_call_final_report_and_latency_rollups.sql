ALTER TABLE "calls" ADD COLUMN "final_report_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "call_usage_rollups" ADD COLUMN "latency_histogram" integer[] DEFAULT '{}'::int[] NOT NULL;--> statement-breakpoint
-- Calls that ended before this column existed take no late report: as before, a report of an ended call is refused.
UPDATE "calls" SET "final_report_at" = coalesce("end_time", "updated_at") WHERE "status" IN ('completed', 'failed', 'busy', 'no_answer', 'canceled');
