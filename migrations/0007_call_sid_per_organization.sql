-- A call sid is unique within its organization, not across organizations (a 409 must not reveal
-- another organization's sid); the credits ledger's source key follows, as call usage is keyed by sid.
ALTER TABLE "calls" DROP CONSTRAINT "calls_pkey";--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_client_id_call_sid_pk" PRIMARY KEY("client_id","call_sid");--> statement-breakpoint
DROP INDEX "credit_transactions_source_key";--> statement-breakpoint
CREATE UNIQUE INDEX "credit_transactions_source_key" ON "credit_transactions" USING btree ("client_id","kind","source_id");
