CREATE TABLE "transfers" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"state" text NOT NULL,
	"status" text NOT NULL,
	"started_at" text NOT NULL,
	"updated_at" text NOT NULL,
	"ended_at" text
);
--> statement-breakpoint
CREATE INDEX "transfers_ended" ON "transfers" USING btree ("ended_at");