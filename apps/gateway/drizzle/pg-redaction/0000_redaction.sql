CREATE TABLE "redaction_patterns" (
	"account_id" text PRIMARY KEY NOT NULL,
	"patterns" text NOT NULL,
	"updated_at" text NOT NULL,
	"updated_by" text NOT NULL
);
