CREATE TABLE `account_settings` (
	`account_id` text PRIMARY KEY NOT NULL,
	`mcp_http` integer NOT NULL,
	`stdio_bridge` integer NOT NULL,
	`legacy_sse` integer NOT NULL,
	`disabled_tool_groups` text NOT NULL,
	`updated_at` text NOT NULL,
	`updated_by` text NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `policies` (
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`version` integer NOT NULL,
	`source` text NOT NULL,
	`parsed` text NOT NULL,
	`created_at` text NOT NULL,
	`created_by` text NOT NULL,
	`updated_at` text NOT NULL,
	`updated_by` text NOT NULL,
	PRIMARY KEY(`account_id`, `name`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `policy_versions` (
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`version` integer NOT NULL,
	`source` text NOT NULL,
	`parsed` text NOT NULL,
	`author` text NOT NULL,
	`at` text NOT NULL,
	PRIMARY KEY(`account_id`, `name`, `version`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
