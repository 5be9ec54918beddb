//! `ps` and `lsof` as read-only commands: programs that report on the system, each with its
//! own option syntax (BSD words like `aux`, `lsof -i :8080`) that the getopt grammars of
//! [`super::grammars`] cannot describe.
//!
//! Neither writes files except `lsof -D` (its device cache), which is not accepted; `ps`'s
//! BSD `e` and format keywords naming the environment are refused too, since they print
//! other processes' environments (cairn's own credentials among them).

use super::grammars::exact;
use super::options::parse;

/// ps's UNIX options, by exact name; `-o`/`-O`/`--format` values are checked apart.
const PS: super::options::Grammar = exact(
    "eAaFfHjlLMTwxyN",
    "CGgpstuUoOq",
    "forest no-headers headers sort= pid= ppid= user= User= group= Group= cols= columns= \
     width= rows= lines= format= help version",
);

/// Whether `ps ARGS` only reads and shows no process's environment.
pub fn ps(args: &[String]) -> bool {
    let Ok(parsed) = parse(&PS, args) else {
        return false;
    };
    let formats_ok = parsed
        .options
        .iter()
        .filter(|(n, _)| matches!(n.as_str(), "o" | "O" | "format"))
        .filter_map(|(_, v)| v.as_deref())
        .all(|f| {
            let f = f.to_ascii_lowercase();
            !f.contains("env")
                && f.chars()
                    .all(|c| c.is_ascii_alphanumeric() || ",:=%_- ".contains(c))
        });
    // BSD-style words (`aux`, `axww`) and process ids; BSD `e` shows environments.
    let words_ok = parsed.operands.iter().all(|w| {
        w.chars().all(|c| "auxwfjlrTScvhmHnZ".contains(c)) || w.chars().all(|c| c.is_ascii_digit())
    });
    formats_ok && words_ok
}

/// lsof's options, by exact name; `-D` (its device cache) writes, and is absent.
const LSOF: super::options::Grammar = exact("ablnNOPRtUVwXh", "cdpu", "help version");

/// Whether `lsof ARGS` only reads. `-i` takes an optional address (`-i :8080`, `-iTCP`),
/// recognised as lsof does by its first character.
pub fn lsof(args: &[String]) -> bool {
    let mut rest = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if let Some(addr) = w.strip_prefix("-i") {
            if !address(addr) {
                return false;
            }
            if addr.is_empty() && args.get(i).is_some_and(|a| looks_like_address(a)) {
                i += 1;
            }
        } else {
            rest.push(w.clone());
        }
    }
    parse(&LSOF, &rest).is_ok()
}

fn looks_like_address(a: &str) -> bool {
    let lower = a.to_ascii_lowercase();
    a.starts_with(['4', '6', ':', '@']) || lower.starts_with("tcp") || lower.starts_with("udp")
}

fn address(a: &str) -> bool {
    a.is_empty()
        || (looks_like_address(a)
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || ".:@,-[]_".contains(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn ps_and_lsof() {
        for ok in [
            "aux",
            "-ef",
            "",
            "-eo pid,comm",
            "axww",
            "-p 1",
            "--sort=-rss aux",
        ] {
            assert!(ps(&w(ok)), "{ok}");
        }
        for bad in ["auxe", "e", "-o environ", "-eo pid,env", "--bogus"] {
            assert!(!ps(&w(bad)), "{bad}");
        }
        for ok in ["-i", "-i :8080", "-iTCP:80", "-nP -i tcp", "-p 1", "-i -n"] {
            assert!(lsof(&w(ok)), "{ok}");
        }
        for bad in ["-D b", "-Db", "-i:80;x", "--bogus", "-r", "-s TCP:LISTEN"] {
            assert!(!lsof(&w(bad)), "{bad}");
        }
    }
}
