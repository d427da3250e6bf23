CREATE TABLE "data_settings" (
	"client_id" text PRIMARY KEY NOT NULL,
	"transcript_retention_days" integer,
	"recording_retention_days" integer,
	"redact_pii" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "transcript_deleted_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "recording_deleted_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "data_settings" ADD CONSTRAINT "data_settings_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;