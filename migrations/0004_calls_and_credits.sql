CREATE TABLE "call_rollups" (
	"client_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"grain" text NOT NULL,
	"bucket" timestamp (3) with time zone NOT NULL,
	"calls" integer NOT NULL,
	"cost_credits" numeric(16, 4) NOT NULL,
	"duration_seconds" double precision NOT NULL,
	CONSTRAINT "call_rollups_client_id_agent_id_grain_bucket_pk" PRIMARY KEY("client_id","agent_id","grain","bucket")
);
--> statement-breakpoint
CREATE TABLE "calls" (
	"call_sid" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"agent_name" text,
	"call_type" text NOT NULL,
	"status" text NOT NULL,
	"from_number" text,
	"to_number" text NOT NULL,
	"recording_enabled" boolean DEFAULT false NOT NULL,
	"start_time" timestamp (3) with time zone,
	"end_time" timestamp (3) with time zone,
	"end_reason" text,
	"duration_seconds" double precision,
	"turn_count" integer,
	"total_cost" numeric(16, 4),
	"cost_breakdown" jsonb,
	"transcript" jsonb,
	"billing_status" text DEFAULT 'pending' NOT NULL,
	"recording_key" text,
	"recording_content_type" text,
	"recording_bytes" bigint,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "credit_accounts" (
	"client_id" text PRIMARY KEY NOT NULL,
	"balance" numeric(16, 4) DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "credit_accounts_balance_nonnegative" CHECK ("credit_accounts"."balance" >= 0)
);
--> statement-breakpoint
CREATE TABLE "credit_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"kind" text NOT NULL,
	"amount" numeric(16, 4) NOT NULL,
	"balance_after" numeric(16, 4) NOT NULL,
	"source_id" text NOT NULL,
	"description" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "call_rollups" ADD CONSTRAINT "call_rollups_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_accounts" ADD CONSTRAINT "credit_accounts_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_transactions" ADD CONSTRAINT "credit_transactions_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calls_client_created_idx" ON "calls" USING btree ("client_id","created_at","call_sid");--> statement-breakpoint
CREATE INDEX "calls_client_agent_created_idx" ON "calls" USING btree ("client_id","agent_id","created_at","call_sid");--> statement-breakpoint
CREATE INDEX "credit_transactions_client_created_idx" ON "credit_transactions" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "credit_transactions_source_key" ON "credit_transactions" USING btree ("kind","source_id");