CREATE SEQUENCE "public"."credential_revocations" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "credential_listeners" (
	"id" text PRIMARY KEY NOT NULL,
	"seen_seq" bigint NOT NULL,
	"heartbeat_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
