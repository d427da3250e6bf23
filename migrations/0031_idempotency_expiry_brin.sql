DROP INDEX "idempotency_keys_expires_idx";--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_brin" ON "idempotency_keys" USING brin ("expires_at");