CREATE TABLE "agent_tools" (
	"client_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"tool_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_tools_agent_id_tool_id_pk" PRIMARY KEY("agent_id","tool_id")
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"agent_name" text NOT NULL,
	"language" text NOT NULL,
	"stt_provider" text NOT NULL,
	"stt_model" text,
	"tts_provider" text NOT NULL,
	"tts_model" text,
	"voice_id" text,
	"llm_provider" text NOT NULL,
	"llm_model" text NOT NULL,
	"system_prompt" text DEFAULT '' NOT NULL,
	"first_message" text,
	"temperature" double precision NOT NULL,
	"max_call_duration_seconds" integer NOT NULL,
	"recording_enabled" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "integrations" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"name" text NOT NULL,
	"provider" text NOT NULL,
	"category" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"credentials_encrypted" text NOT NULL,
	"last_validated_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "phone_numbers" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"phone_number" text NOT NULL,
	"provider" text NOT NULL,
	"supports_inbound" boolean DEFAULT false NOT NULL,
	"supports_outbound" boolean DEFAULT false NOT NULL,
	"integration_id" text,
	"agent_id" text,
	"carrier_number_sid" text,
	"sip_trunk_name" text,
	"sip_username" text,
	"sip_password_encrypted" text,
	"sip_server_address" text,
	"inbound_room_name" text,
	"inbound_pin_encrypted" text,
	"media_encryption" text,
	"sip_inbound_trunk_id" text,
	"sip_outbound_trunk_id" text,
	"sip_dispatch_rule_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sip_resources" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"kind" text NOT NULL,
	"spec" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tools" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"tool_description" text NOT NULL,
	"webhook_url" text NOT NULL,
	"http_method" text NOT NULL,
	"headers" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"parameters" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"timeout_seconds" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_tools" ADD CONSTRAINT "agent_tools_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_tools" ADD CONSTRAINT "agent_tools_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_tools" ADD CONSTRAINT "agent_tools_tool_id_tools_id_fk" FOREIGN KEY ("tool_id") REFERENCES "public"."tools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integrations" ADD CONSTRAINT "integrations_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_integration_id_integrations_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."integrations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "phone_numbers" ADD CONSTRAINT "phone_numbers_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sip_resources" ADD CONSTRAINT "sip_resources_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tools" ADD CONSTRAINT "tools_client_id_organizations_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_tools_tool_idx" ON "agent_tools" USING btree ("tool_id");--> statement-breakpoint
CREATE INDEX "agents_client_created_idx" ON "agents" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "integrations_client_created_idx" ON "integrations" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "phone_numbers_number_key" ON "phone_numbers" USING btree ("phone_number");--> statement-breakpoint
CREATE INDEX "phone_numbers_client_created_idx" ON "phone_numbers" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "phone_numbers_agent_idx" ON "phone_numbers" USING btree ("agent_id");--> statement-breakpoint
CREATE INDEX "phone_numbers_integration_idx" ON "phone_numbers" USING btree ("integration_id");--> statement-breakpoint
CREATE INDEX "tools_client_created_idx" ON "tools" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "tools_client_name_key" ON "tools" USING btree ("client_id","tool_name");