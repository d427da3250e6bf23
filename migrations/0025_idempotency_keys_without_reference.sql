ALTER TABLE "idempotency_keys" DROP CONSTRAINT "idempotency_keys_client_id_organizations_id_fk";
