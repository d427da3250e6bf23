-- Each organization has a concurrency limit (extensions.md §6); the partial index lets its check count only the active calls.
ALTER TABLE "organizations" ADD COLUMN "max_concurrent_calls" integer DEFAULT 10 NOT NULL;--> statement-breakpoint
CREATE INDEX "calls_active_idx" ON "calls" USING btree ("client_id") WHERE status IN ('queued', 'ringing', 'in_progress');