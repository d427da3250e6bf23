-- The carrier's id of a call, by which its status callbacks find the call (extensions.md §2).
ALTER TABLE "calls" ADD COLUMN "provider_call_sid" text;--> statement-breakpoint
CREATE UNIQUE INDEX "calls_provider_call_sid_key" ON "calls" USING btree ("provider_call_sid") WHERE provider_call_sid IS NOT NULL;