CREATE TABLE "call_usage_rollups" (
	"client_id" text NOT NULL,
	"grain" text NOT NULL,
	"dimension" text NOT NULL,
	"bucket" timestamp (3) with time zone NOT NULL,
	"agent_id" text NOT NULL,
	"call_type" text NOT NULL,
	"status" text NOT NULL,
	"value" text NOT NULL,
	"calls" integer NOT NULL,
	"duration_seconds" double precision NOT NULL,
	"cost" numeric(16, 4) NOT NULL,
	"cost_stt" numeric(16, 4) NOT NULL,
	"cost_llm" numeric(16, 4) NOT NULL,
	"cost_tts" numeric(16, 4) NOT NULL,
	"cost_telephony" numeric(16, 4) NOT NULL,
	"cost_platform" numeric(16, 4) NOT NULL,
	"histogram" integer[] NOT NULL,
	CONSTRAINT "call_usage_rollups_client_id_grain_dimension_bucket_agent_id_call_type_status_value_pk" PRIMARY KEY("client_id","grain","dimension","bucket","agent_id","call_type","status","value")
);
--> statement-breakpoint
ALTER TABLE "call_usage_rollups" ADD CONSTRAINT "call_usage_rollups_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calls_client_counted_at_idx" ON "calls" USING btree ("client_id",coalesce("start_time", "created_at"));--> statement-breakpoint
-- Calls that ended before this migration, counted as the final report counts them (src/modules/analytics/usage-rollups.ts).
INSERT INTO call_usage_rollups (client_id, grain, dimension, bucket, agent_id, call_type, status, value, calls, duration_seconds, cost, cost_stt, cost_llm, cost_tts, cost_telephony, cost_platform, histogram)
SELECT client_id, grain, dimension, bucket, agent_id, call_type, status, value, sum(n)::int AS calls, sum(d)::float8 AS duration_seconds,
  sum(c) AS cost, sum(stt) AS cost_stt, sum(llm) AS cost_llm, sum(tts) AS cost_tts, sum(tel) AS cost_telephony, sum(plat) AS cost_platform,
  (SELECT ('[' || min(bin) || ':' || max(bin) || ']={' || string_agg(coalesce((jsonb_object_agg(bin, n)) ->> b::text, 'NULL'), ',' ORDER BY b) || '}') FROM generate_series(min(bin), max(bin)) b)::int[] AS histogram
FROM (
  SELECT x.client_id, g.grain, dm.dimension, date_bin(g.step, x.at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket, x.agent_id, x.call_type, x.status, dm.value, x.bin,
    count(*) AS n, sum(x.dur) AS d, sum(x.cost) AS c, sum(x.stt) AS stt, sum(x.llm) AS llm, sum(x.tts) AS tts, sum(x.tel) AS tel, sum(x.plat) AS plat
  FROM (
    SELECT client_id, agent_id, call_type, status, coalesce(start_time, created_at) AS at, coalesce(duration_seconds, 0) AS dur, coalesce(total_cost, 0) AS cost,
      coalesce((cost_breakdown ->> 'stt')::numeric, 0) AS stt, coalesce((cost_breakdown ->> 'llm')::numeric, 0) AS llm, coalesce((cost_breakdown ->> 'tts')::numeric, 0) AS tts,
      coalesce((cost_breakdown ->> 'telephony')::numeric, 0) AS tel, coalesce((cost_breakdown ->> 'platform')::numeric, 0) AS plat,
      CASE WHEN coalesce(duration_seconds, 0) <= 0 THEN 0 WHEN duration_seconds < 0.1 THEN 1 ELSE least(180, 2 + floor(ln(duration_seconds / 0.1) / ln(1.08))::int) END AS bin,
      CASE WHEN call_type = 'outbound' THEN from_number ELSE to_number END AS number, end_reason, campaign_id
    FROM calls WHERE status IN ('completed', 'failed', 'busy', 'no_answer', 'canceled')
  ) x
  CROSS JOIN (VALUES ('day', interval '1 day'), ('hour', interval '1 hour'), ('quarter', interval '15 minutes'), ('minute', interval '1 minute')) AS g(grain, step)
  CROSS JOIN LATERAL (VALUES ('none', ''), ('phone_number', coalesce(x.number, '')), ('end_reason', coalesce(x.end_reason, '')), ('campaign', coalesce(x.campaign_id, ''))) AS dm(dimension, value)
  GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
) per_bin
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
;
