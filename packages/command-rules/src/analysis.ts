import type { Verdict } from './policy-schema';
import { ShellState } from './shell-language';
import type { Arg, Reason } from './types';

/** Deepest nesting of `sh -c`, `eval`, wrappers and substitutions looked into before giving up (opaque). */
export const maxNestingDepth = 12;
/** Most commands one line may contain before the rest is treated as unknown (opaque). */
export const maxCommands = 2000;

/**
 * What a command reads on its standard input, as far as it can be known before running. `evidence` is what an
 * unknown feed probably holds (`echo … | sh`), worked out only when a shell or xargs asks for it.
 */
export type StdinFeed =
  | { known: true; text: string; what: string }
  | { known: false; what: string; evidence?: (() => string | undefined) | undefined };

/** One command found in the line (after unwrapping), to be matched against rules and the built-in layers. */
export interface CommandRecord {
  args: Arg[];
  /**
   * A known transparent wrapper (`env`, `timeout`, `sh -c 'literal'`, …) whose inner command is judged on its own:
   * a rule may name it, but the policy's default does not apply to it.
   */
  transparent?: boolean;
}

/** Everything found in one command line: its commands and what the analysis could not see through. */
export class Analysis {
  readonly commands: CommandRecord[] = [];
  readonly findings: Reason[] = [];
  /** What the walk of the current shell text knows about its variables and functions (one per shell process). */
  shell = new ShellState();
  private truncated = false;

  addCommand(args: Arg[]): boolean {
    if (this.commands.length >= maxCommands) {
      if (!this.truncated) this.opaque([], `more than ${maxCommands} commands in one line`);
      this.truncated = true;
      return false;
    }
    this.commands.push({ args });
    return true;
  }

  /** Marks the command with exactly these words (the same array) as a transparent wrapper. */
  markTransparent(args: readonly Arg[]): void {
    for (let i = this.commands.length - 1; i >= 0; i--) {
      const record = this.commands[i] as CommandRecord;
      if (record.args === args) {
        record.transparent = true;
        return;
      }
    }
  }

  opaque(args: readonly Arg[], message: string, verdict: Verdict = 'approve'): void {
    this.findings.push({ command: words(args), layer: 'opaque', verdict, message });
  }

  parseProblem(message: string, verdict: Verdict = 'approve'): void {
    this.findings.push({ command: [], layer: 'parse', verdict, message });
  }

  catastrophic(args: readonly Arg[], message: string): void {
    this.findings.push({ command: words(args), layer: 'catastrophic', verdict: 'deny', message });
  }
}

/** The words of a command as shown in reasons. */
export function words(args: readonly Arg[]): string[] {
  return args.map((arg) => arg.display);
}
