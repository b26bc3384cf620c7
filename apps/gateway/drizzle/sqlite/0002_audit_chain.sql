CREATE TABLE `audit_chains` (
	`account_id` text PRIMARY KEY NOT NULL,
	`head_id` integer,
	`head_hash` text,
	`anchor_id` integer,
	`anchor_hash` text,
	`retention_days` integer
);
--> statement-breakpoint
CREATE TABLE `takeover_notices` (
	`account_id` text NOT NULL,
	`credential_id` text NOT NULL,
	`machine_id` text NOT NULL,
	`user_id` text NOT NULL,
	`tool` text NOT NULL,
	`at` text NOT NULL,
	PRIMARY KEY(`credential_id`, `machine_id`)
);
--> statement-breakpoint
ALTER TABLE `audit_events` ADD `user_id` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `tool` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `machine_id` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `credential_id` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `client_name` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `request_id` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `duration_ms` integer;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `prev_hash` text;--> statement-breakpoint
ALTER TABLE `audit_events` ADD `hash` text;--> statement-breakpoint
CREATE INDEX `audit_account_action` ON `audit_events` (`account_id`,`action`,`id`);--> statement-breakpoint
CREATE INDEX `audit_account_user` ON `audit_events` (`account_id`,`user_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_account_tool` ON `audit_events` (`account_id`,`tool`,`id`);--> statement-breakpoint
CREATE INDEX `audit_account_machine` ON `audit_events` (`account_id`,`machine_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_account_credential` ON `audit_events` (`account_id`,`credential_id`,`id`);--> statement-breakpoint
CREATE INDEX `audit_account_outcome` ON `audit_events` (`account_id`,`outcome`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `audit_account_prev_hash` ON `audit_events` (`account_id`,`prev_hash`);--> statement-breakpoint
-- Rows from before the typed columns: fill what their actor and action already say (they are chained after this).
UPDATE `audit_events` SET `user_id` = substr(`actor`, 6) WHERE `actor` LIKE 'user:%';--> statement-breakpoint
UPDATE `audit_events` SET `credential_id` = substr(`actor`, instr(`actor`, ':') + 1) WHERE `actor` LIKE 'connection:%' OR `actor` LIKE 'token:%';--> statement-breakpoint
UPDATE `audit_events` SET `tool` = substr(`action`, 6) WHERE `action` LIKE 'tool.%';--> statement-breakpoint
UPDATE `audit_events` SET `machine_id` = `target` WHERE `action` LIKE 'tool.%' AND `target` LIKE 'mch_%';
