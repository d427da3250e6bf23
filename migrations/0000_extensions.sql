-- Extensions drizzle-kit does not emit: pgvector for the vector index, pg_trgm for name search.
CREATE EXTENSION IF NOT EXISTS vector;
--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS pg_trgm;
