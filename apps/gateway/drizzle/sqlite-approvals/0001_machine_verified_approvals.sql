ALTER TABLE `approval_requests` ADD `proof_binding` text;--> statement-breakpoint
ALTER TABLE `approval_requests` ADD `passkey_only` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `approval_requests` ADD `assertion` text;