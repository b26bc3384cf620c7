CREATE TABLE "mcp_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"credential_id" text NOT NULL,
	"user_id" text NOT NULL,
	"account_id" text NOT NULL,
	"client_name" text,
	"client_version" text,
	"protocol_version" text,
	"created_at" text NOT NULL,
	"last_seen_at" text NOT NULL,
	"closed_at" text
);
--> statement-breakpoint
CREATE INDEX "mcp_sessions_credential" ON "mcp_sessions" USING btree ("credential_id");--> statement-breakpoint
CREATE INDEX "mcp_sessions_user" ON "mcp_sessions" USING btree ("user_id","account_id");--> statement-breakpoint
CREATE INDEX "mcp_sessions_last_seen" ON "mcp_sessions" USING btree ("last_seen_at");