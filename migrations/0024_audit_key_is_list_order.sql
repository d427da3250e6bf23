-- An audit entry's key is the list's order (organization, time, id): the index of the id alone was
-- written by every change and read by nothing.
DROP INDEX "audit_logs_client_at_idx";--> statement-breakpoint
ALTER TABLE "audit_logs" DROP CONSTRAINT "audit_logs_pkey";--> statement-breakpoint
ALTER TABLE "audit_logs" ADD CONSTRAINT "audit_logs_pkey" PRIMARY KEY("client_id","at","id");
