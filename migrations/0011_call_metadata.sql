-- A call carries the caller's own JSON (metadata) and the prompt variables of the runtime (extensions.md §2).
ALTER TABLE "calls" ADD COLUMN "metadata" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "variables" jsonb DEFAULT '{}'::jsonb NOT NULL;