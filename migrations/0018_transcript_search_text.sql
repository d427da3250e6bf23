-- The text of a transcript that full-text search reads (extensions.md §4): its turns' texts in order.
-- IMMUTABLE so a generated column can call it. Cut at 100,000 characters: a tsvector holds at most
-- 1 MB, and a longer transcript must still be stored (its first 100,000 characters are searchable).
CREATE FUNCTION call_transcript_search_text(transcript jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT left(coalesce(string_agg(turn ->> 'text', E'\n' ORDER BY position), ''), 100000)
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(transcript) = 'array' THEN transcript ELSE '[]'::jsonb END)
      WITH ORDINALITY AS turns(turn, position)
  $$;
