CREATE TABLE "campaign_contact_staging" (
	"upload_id" text NOT NULL,
	"client_id" text NOT NULL,
	"campaign_id" text NOT NULL,
	"batch" integer NOT NULL,
	"row" integer NOT NULL,
	"phone_number" text NOT NULL,
	"variables" jsonb NOT NULL,
	"staged_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "campaign_contact_staging_upload_id_batch_row_pk" PRIMARY KEY("upload_id","batch","row")
);
