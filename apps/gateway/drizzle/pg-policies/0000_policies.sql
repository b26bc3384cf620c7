CREATE TABLE "account_settings" (
	"account_id" text PRIMARY KEY NOT NULL,
	"mcp_http" integer NOT NULL,
	"stdio_bridge" integer NOT NULL,
	"legacy_sse" integer NOT NULL,
	"disabled_tool_groups" text NOT NULL,
	"updated_at" text NOT NULL,
	"updated_by" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policies" (
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"version" integer NOT NULL,
	"source" text NOT NULL,
	"parsed" text NOT NULL,
	"created_at" text NOT NULL,
	"created_by" text NOT NULL,
	"updated_at" text NOT NULL,
	"updated_by" text NOT NULL,
	CONSTRAINT "policies_account_id_name_pk" PRIMARY KEY("account_id","name")
);
--> statement-breakpoint
CREATE TABLE "policy_versions" (
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"version" integer NOT NULL,
	"source" text NOT NULL,
	"parsed" text NOT NULL,
	"author" text NOT NULL,
	"at" text NOT NULL,
	CONSTRAINT "policy_versions_account_id_name_version_pk" PRIMARY KEY("account_id","name","version")
);
--> statement-breakpoint
ALTER TABLE "account_settings" ADD CONSTRAINT "account_settings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policies" ADD CONSTRAINT "policies_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_versions" ADD CONSTRAINT "policy_versions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;