CREATE TABLE "approval_challenges" (
	"challenge" text PRIMARY KEY NOT NULL,
	"approval_id" text NOT NULL,
	"user_id" text NOT NULL,
	"created_at" text NOT NULL,
	"expires_at" text NOT NULL,
	"used_at" text
);
--> statement-breakpoint
CREATE TABLE "approval_gate_locks" (
	"credential_id" text PRIMARY KEY NOT NULL,
	"gates" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "approval_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"credential_id" text NOT NULL,
	"requester_id" text NOT NULL,
	"client_name" text,
	"tool" text NOT NULL,
	"machine_id" text NOT NULL,
	"machine_name" text NOT NULL,
	"args" text NOT NULL,
	"args_hash" text NOT NULL,
	"policy_hash" text NOT NULL,
	"policy_name" text NOT NULL,
	"reason" text NOT NULL,
	"approvers" text NOT NULL,
	"asked_user_ids" text NOT NULL,
	"status" text NOT NULL,
	"created_at" text NOT NULL,
	"expires_at" text NOT NULL,
	"decided_at" text,
	"decided_by" text,
	"decided_with" text,
	"used_at" text,
	"proof_binding" text,
	"passkey_only" integer DEFAULT 0 NOT NULL,
	"assertion" text
);
--> statement-breakpoint
CREATE TABLE "push_subscriptions" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"user_id" text NOT NULL,
	"endpoint" text NOT NULL,
	"p256dh" text NOT NULL,
	"auth" text NOT NULL,
	"user_agent" text,
	"created_at" text NOT NULL,
	"last_success_at" text,
	"failures" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "push_vapid_keys" (
	"id" integer PRIMARY KEY NOT NULL,
	"public_key" text NOT NULL,
	"private_key" text NOT NULL,
	"created_at" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "approval_challenges" ADD CONSTRAINT "approval_challenges_approval_id_approval_requests_id_fk" FOREIGN KEY ("approval_id") REFERENCES "public"."approval_requests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approval_requests_binding" ON "approval_requests" USING btree ("credential_id","tool","machine_id","args_hash","policy_hash");--> statement-breakpoint
CREATE INDEX "approval_requests_account_created" ON "approval_requests" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "approval_requests_status_expires" ON "approval_requests" USING btree ("status","expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "approval_requests_one_pending" ON "approval_requests" USING btree ("credential_id","tool","machine_id","args_hash","policy_hash") WHERE status = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "push_subscriptions_endpoint" ON "push_subscriptions" USING btree ("endpoint");--> statement-breakpoint
CREATE INDEX "push_subscriptions_user" ON "push_subscriptions" USING btree ("user_id");