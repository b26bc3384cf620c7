CREATE TABLE `machine_network` (
	`machine_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`network` text NOT NULL,
	`reported_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `machine_network_account` ON `machine_network` (`account_id`);