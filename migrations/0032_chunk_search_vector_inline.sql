-- The full-text side of knowledge-base search tests `search_vector @@ query` on every chunk it
-- examines. A chunk's row (text, a 256-float embedding and the tsvector with positions, about 3 KB)
-- is over the 2 KB TOAST threshold, and the tsvector, its widest column, was the one moved out of
-- line: each examined chunk cost a TOAST index lookup and a TOAST heap read. MAIN keeps it in the
-- row and moves the text and embedding out instead, which search reads only for its final ten rows
-- (the HNSW index holds its own vectors): the pool of 500 matches took 11 ms instead of 30 ms at
-- the median (docs/benchmarks.md, kb-search). Rows written before this keep their layout until
-- rewritten (re-processing a document rewrites its chunks).
ALTER TABLE "document_chunks" ALTER COLUMN "search_vector" SET STORAGE MAIN;
