//! Exit statuses, and the one way every subcommand reports bad input.

use std::fmt::Display;
use std::process::ExitCode;

/// A check failed: a conformance case, a model property.
pub const EXIT_FAILED: u8 = 1;
/// Bad input: flags, case files, addresses (clap's usage errors too).
pub const EXIT_BAD_INPUT: u8 = 2;
// 3, a model check that stopped before it explored everything, comes with
// the model's report (`Report::exit_code`).

/// Says what is wrong on stderr and returns the bad-input status.
pub fn bad_input(message: impl Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_BAD_INPUT)
}
