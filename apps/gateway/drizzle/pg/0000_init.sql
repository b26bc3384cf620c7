CREATE SEQUENCE "public"."audit_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"name" text NOT NULL,
	"token_hash" text NOT NULL,
	"grant" text NOT NULL,
	"created_at" text NOT NULL,
	"expires_at" text,
	"revoked_at" text,
	"last_used_at" text
);
--> statement-breakpoint
CREATE TABLE "audit_chains" (
	"account_id" text PRIMARY KEY NOT NULL,
	"head_id" bigint,
	"head_hash" text,
	"anchor_id" bigint,
	"anchor_hash" text,
	"retention_days" integer
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"id" bigint PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"at" text NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"target" text,
	"decision" text,
	"outcome" text,
	"details" text DEFAULT '{}' NOT NULL,
	"user_id" text,
	"tool" text,
	"machine_id" text,
	"credential_id" text,
	"client_name" text,
	"request_id" text,
	"duration_ms" integer,
	"prev_hash" text,
	"hash" text
);
--> statement-breakpoint
CREATE TABLE "gateway_bootstrap" (
	"id" integer PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "join_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" text NOT NULL,
	"expires_at" text NOT NULL,
	"used_at" text,
	"machine_id" text
);
--> statement-breakpoint
CREATE TABLE "machines" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"public_key" text NOT NULL,
	"hostname" text,
	"os" text,
	"os_release" text,
	"arch" text,
	"agent_version" text,
	"labels" text DEFAULT '[]' NOT NULL,
	"ceiling" text,
	"ceiling_source" text,
	"ceiling_error" text,
	"enrolled_at" text NOT NULL,
	"last_seen_at" text,
	"revoked_at" text
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"role" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "takeover_notices" (
	"account_id" text NOT NULL,
	"credential_id" text NOT NULL,
	"machine_id" text NOT NULL,
	"user_id" text NOT NULL,
	"tool" text NOT NULL,
	"at" text NOT NULL,
	CONSTRAINT "takeover_notices_credential_id_machine_id_pk" PRIMARY KEY("credential_id","machine_id")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text,
	"created_at" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "join_tokens" ADD CONSTRAINT "join_tokens_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "machines" ADD CONSTRAINT "machines_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_hash" ON "api_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "audit_account_at" ON "audit_events" USING btree ("account_id","at");--> statement-breakpoint
CREATE INDEX "audit_account_action" ON "audit_events" USING btree ("account_id","action","id");--> statement-breakpoint
CREATE INDEX "audit_account_user" ON "audit_events" USING btree ("account_id","user_id","id");--> statement-breakpoint
CREATE INDEX "audit_account_tool" ON "audit_events" USING btree ("account_id","tool","id");--> statement-breakpoint
CREATE INDEX "audit_account_machine" ON "audit_events" USING btree ("account_id","machine_id","id");--> statement-breakpoint
CREATE INDEX "audit_account_credential" ON "audit_events" USING btree ("account_id","credential_id","id");--> statement-breakpoint
CREATE INDEX "audit_account_outcome" ON "audit_events" USING btree ("account_id","outcome","id");--> statement-breakpoint
CREATE UNIQUE INDEX "audit_account_prev_hash" ON "audit_events" USING btree ("account_id","prev_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "join_tokens_hash" ON "join_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "machines_account_name" ON "machines" USING btree ("account_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_account_user" ON "memberships" USING btree ("account_id","user_id");