//! The `cairn` binary: parse the command line and start the TUI or headless mode.

fn main() {}
