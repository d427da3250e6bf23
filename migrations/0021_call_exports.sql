CREATE TABLE "call_exports" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"format" text NOT NULL,
	"include_transcript" boolean DEFAULT false NOT NULL,
	"filters" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"row_count" integer,
	"bytes" bigint,
	"object_key" text,
	"error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "call_exports" ADD CONSTRAINT "call_exports_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "call_exports_client_idx" ON "call_exports" USING btree ("client_id","id");--> statement-breakpoint
CREATE INDEX "call_exports_expires_idx" ON "call_exports" USING btree ("expires_at");