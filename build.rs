//! Link settings of the `cairn` binary that cargo profiles cannot express. Both make the
//! binary start in less memory (BENCHMARKS.md, issue 28's fourth pass); neither changes what it
//! does. Each is used only where the toolchain is known to support it, and a build elsewhere
//! links as before.
//!
//! - **Packed relative relocations** (`-z pack-relative-relocs`, DT_RELR), on Linux with glibc.
//!   A position-independent Rust binary carries tens of thousands of relative relocations
//!   (every vtable and string reference in read-only data); in the classic format each takes
//!   24 bytes the loader reads at every start, over a megabyte of the binary made resident
//!   before `main`. Packed, they take a few kilobytes. Address randomisation stays. Such a
//!   binary needs glibc 2.36 or later, which marks its support with the `GLIBC_ABI_DT_RELR`
//!   symbol version: the flag is added only when the C library the binary links against
//!   defines it.
//! - **Start-up code first** (`--symbol-ordering-file=assets/link-order.txt`), with the LLVM
//!   linker Rust uses by default on x86_64 Linux since 1.90. The kernel maps a program's code
//!   in windows around each page it touches, so code run at start-up that is scattered over
//!   the binary makes most of it resident. The file lists the functions typical sessions run
//!   (`scripts/link-order.sh` regenerates it from a profiled run); the linker places them
//!   together at the front. Names it no longer finds are skipped silently, so a stale list
//!   costs memory, never correctness. Not used when a linker is configured
//!   (`RUSTC_LINKER`, `-C linker`, `-fuse-ld`, …), since GNU ld does not know the option.

use std::env;
use std::path::Path;
use std::process::Command;

const ORDER_FILE: &str = "assets/link-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={ORDER_FILE}");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let var = |name: &str| env::var(name).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    if var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && native
        && glibc_has_dt_relr()
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join(ORDER_FILE);
    if var("TARGET") == "x86_64-unknown-linux-gnu" && default_lld() && order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the C library the linker will find defines `GLIBC_ABI_DT_RELR`. Asks the C
/// compiler where `libc.so.6` is (the linker driver Rust uses on Linux), then looks for the
/// version name in it. Any failure answers no: the classic relocations always work.
fn glibc_has_dt_relr() -> bool {
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let Ok(out) = Command::new(cc).arg("-print-file-name=libc.so.6").output() else {
        return false;
    };
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    // `cc` prints the bare name back when it does not find the file.
    if !out.status.success() || !Path::new(&path).is_absolute() {
        return false;
    }
    println!("cargo:rerun-if-changed={path}");
    std::fs::read(&path)
        .map(|bytes| bytes.windows(17).any(|w| w == b"GLIBC_ABI_DT_RELR"))
        .unwrap_or(false)
}

/// Whether this build links with the LLVM linker rustc brings (its default for
/// x86_64-unknown-linux-gnu since Rust 1.90): a rustc that recent, and no linker chosen by
/// configuration or flags. Any doubt answers no.
fn default_lld() -> bool {
    if env::var_os("RUSTC_LINKER").is_some() {
        return false;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f))
    {
        return false;
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let Ok(out) = Command::new(rustc).arg("-V").output() else {
        return false;
    };
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let version = String::from_utf8_lossy(&out.stdout);
    let mut parts = version
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    matches!((parts.next(), parts.next()), (Some(1), Some(minor)) if minor >= 90)
}
