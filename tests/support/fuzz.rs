//! Time-boxed property fuzzing on stable Rust. A fuzz target is an ordinary `#[test]` that
//! calls [`fuzz`] with a proptest strategy and a check. In `cargo test` it runs a fixed, small
//! number of cases, so the suite stays fast and deterministic in length; `scripts/fuzz.sh` sets
//! `CAIRN_FUZZ_SECS` and the same target then runs fresh random batches until that much time
//! has passed. A failing case is shrunk by proptest and reported with the target's name.
#![allow(dead_code)]

use std::fmt::Debug;
use std::time::{Duration, Instant};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

/// Cases per run in the ordinary test suite.
const SUITE_CASES: u32 = 256;
/// Cases per batch while fuzzing for a time; a new random seed every batch.
const BATCH_CASES: u32 = 2_000;

/// Runs `check` on values from `strategy`: `SUITE_CASES` of them, or batches until
/// `CAIRN_FUZZ_SECS` seconds have passed. Panics with the shrunk input on the first failure.
pub fn fuzz<S>(name: &str, strategy: S, check: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S: Strategy,
    S::Value: Debug,
{
    let budget = std::env::var("CAIRN_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs);
    let started = Instant::now();
    let mut cases: u64 = 0;
    loop {
        let batch = if budget.is_some() {
            BATCH_CASES
        } else {
            SUITE_CASES
        };
        let config = Config {
            cases: batch,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        match runner.run(&strategy, &check) {
            Ok(()) => {}
            Err(TestError::Fail(why, value)) => {
                panic!("fuzz target {name} failed after {cases} cases: {why}\ninput: {value:#?}")
            }
            Err(TestError::Abort(why)) => panic!("fuzz target {name} aborted: {why}"),
        }
        cases += u64::from(batch);
        match budget {
            Some(budget) if started.elapsed() < budget => continue,
            _ => break,
        }
    }
    if budget.is_some() {
        eprintln!(
            "fuzz target {name}: {cases} cases in {:.0} s, no failure",
            started.elapsed().as_secs_f64()
        );
    }
}
