CREATE TABLE "agent_documents" (
	"agent_id" text NOT NULL,
	"document_id" text NOT NULL,
	"client_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_documents_agent_id_document_id_pk" PRIMARY KEY("agent_id","document_id")
);
--> statement-breakpoint
CREATE TABLE "document_chunks" (
	"document_id" text NOT NULL,
	"chunk_index" integer NOT NULL,
	"client_id" text NOT NULL,
	"page" integer,
	"text" text NOT NULL,
	"embedding" vector(256) NOT NULL,
	"search_vector" "tsvector" GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
	CONSTRAINT "document_chunks_document_id_chunk_index_pk" PRIMARY KEY("document_id","chunk_index")
);
--> statement-breakpoint
CREATE TABLE "documents" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"format" text NOT NULL,
	"filename" text,
	"content_type" text,
	"size_bytes" bigint NOT NULL,
	"storage_key" text,
	"storage_uri" text,
	"text" text,
	"processing_status" text DEFAULT 'pending' NOT NULL,
	"processing_error" text,
	"revision" integer DEFAULT 1 NOT NULL,
	"message_id" text,
	"page_count" integer,
	"word_count" integer,
	"vector_count" integer DEFAULT 0 NOT NULL,
	"last_processed_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_documents" ADD CONSTRAINT "agent_documents_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_documents" ADD CONSTRAINT "agent_documents_document_id_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_documents" ADD CONSTRAINT "agent_documents_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "document_chunks" ADD CONSTRAINT "document_chunks_document_id_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."documents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "document_chunks" ADD CONSTRAINT "document_chunks_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "documents" ADD CONSTRAINT "documents_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "agent_documents_document_idx" ON "agent_documents" USING btree ("document_id","agent_id");--> statement-breakpoint
CREATE INDEX "document_chunks_client_idx" ON "document_chunks" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "document_chunks_embedding_idx" ON "document_chunks" USING hnsw ("embedding" vector_cosine_ops);--> statement-breakpoint
CREATE INDEX "document_chunks_search_idx" ON "document_chunks" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "documents_client_created_idx" ON "documents" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "documents_client_updated_idx" ON "documents" USING btree ("client_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "documents_client_name_idx" ON "documents" USING btree ("client_id","name","id");--> statement-breakpoint
CREATE INDEX "documents_client_size_idx" ON "documents" USING btree ("client_id","size_bytes","id");--> statement-breakpoint
CREATE INDEX "documents_name_trgm_idx" ON "documents" USING gin ("name" gin_trgm_ops);