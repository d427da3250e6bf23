CREATE TABLE "campaign_contacts" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "campaign_contacts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"campaign_id" text NOT NULL,
	"client_id" text NOT NULL,
	"row" integer NOT NULL,
	"phone_number" text NOT NULL,
	"variables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"call_sids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"current_call_sid" text,
	"placement" text,
	"last_outcome" text,
	"next_attempt_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"name" text NOT NULL,
	"agent_id" text NOT NULL,
	"from_phone_number_id" text NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"timezone" text NOT NULL,
	"windows" jsonb NOT NULL,
	"start_at" timestamp (3) with time zone,
	"end_at" timestamp (3) with time zone,
	"max_concurrency" integer NOT NULL,
	"calls_per_minute" integer NOT NULL,
	"retry_max_attempts" integer NOT NULL,
	"retry_on" jsonb NOT NULL,
	"retry_delay_minutes" integer NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"pending" integer DEFAULT 0 NOT NULL,
	"in_progress" integer DEFAULT 0 NOT NULL,
	"completed" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"retrying" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"recent_dials" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"completed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "calls" ADD COLUMN "campaign_id" text;--> statement-breakpoint
ALTER TABLE "campaign_contacts" ADD CONSTRAINT "campaign_contacts_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_contacts" ADD CONSTRAINT "campaign_contacts_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "campaign_contacts_number_key" ON "campaign_contacts" USING btree ("campaign_id","phone_number");--> statement-breakpoint
CREATE INDEX "campaign_contacts_status_idx" ON "campaign_contacts" USING btree ("campaign_id","status","id");--> statement-breakpoint
CREATE INDEX "campaign_contacts_campaign_idx" ON "campaign_contacts" USING btree ("campaign_id","id");--> statement-breakpoint
CREATE INDEX "campaign_contacts_current_call_idx" ON "campaign_contacts" USING btree ("current_call_sid") WHERE current_call_sid IS NOT NULL;--> statement-breakpoint
CREATE INDEX "campaigns_client_created_idx" ON "campaigns" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "calls_client_campaign_created_idx" ON "calls" USING btree ("client_id","campaign_id","created_at");