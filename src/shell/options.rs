//! Option grammars: which options a command accepts as read-only, as data.
//!
//! A [`Grammar`] names a command's safe short flags, its safe short options that take a value,
//! and its long options (each safe or known-unsafe, with or without a value). [`parse`] reads
//! argument words the way GNU `getopt_long` does: short bundles (`-ro`), values attached or
//! separate (`-ox`, `-o x`, `--output=x`, `--output x`), any unambiguous prefix of a long option
//! (`--outp` = `--output`, exact names first) and `--` ending the options. The answer is
//! all-or-nothing: an unknown, ambiguous or unsafe option makes the whole command fail, so a
//! command is read-only only when every option it was given is known to be safe. Long options
//! that are unsafe must still be listed (marked `!`), so that an abbreviation resolves the way
//! the real program resolves it.

/// How a command's options are spelled. Long options are written as one space-separated
/// string: `name` takes no value, `name=` needs one (attached or the next word), `name?` takes
/// one only attached (`--color[=WHEN]`); a leading `!` marks an option the program has but that
/// writes or runs something.
#[derive(Debug, Clone, Copy)]
pub struct Grammar<'a> {
    /// Short options without a value (`-l`), bundlable.
    pub flags: &'a str,
    /// Short options with a value (`-n 5`, `-n5`).
    pub valued: &'a str,
    pub long: &'a str,
    /// `-5` means a count (`head -5`, `git log -3`).
    pub digits: bool,
    /// Whether a unique prefix of a long option means that option (GNU getopt does; programs
    /// with their own parsers do not, and then only exact names are accepted).
    pub abbrev: bool,
}

/// The words of a command split into options and operands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Options by canonical name (`o` for `-o`, `output` for `--outp`), with their values.
    pub options: Vec<(String, Option<String>)>,
    pub operands: Vec<String>,
}

impl Parsed {
    pub fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    None,
    Required,
    Optional,
}

struct Long<'a> {
    name: &'a str,
    arg: Arg,
    safe: bool,
}

fn longs(spec: &str) -> impl Iterator<Item = Long<'_>> {
    spec.split_whitespace().map(|t| {
        let (safe, t) = match t.strip_prefix('!') {
            Some(rest) => (false, rest),
            None => (true, t),
        };
        let (name, arg) = if let Some(n) = t.strip_suffix('=') {
            (n, Arg::Required)
        } else if let Some(n) = t.strip_suffix('?') {
            (n, Arg::Optional)
        } else {
            (t, Arg::None)
        };
        Long { name, arg, safe }
    })
}

/// Why a command's options are not all known to be safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Unknown(String),
    Ambiguous(String),
    Unsafe(String),
    MissingValue(String),
}

/// Split `args` (the words after the command name) by `g`; fails closed.
pub fn parse(g: &Grammar<'_>, args: &[String]) -> Result<Parsed, Refusal> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        i += 1;
        if w == "--" {
            out.operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = w.strip_prefix("--") {
            let (name, attached) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let long = resolve_long(g, name)?;
            if !long.safe {
                return Err(Refusal::Unsafe(format!("--{}", long.name)));
            }
            let value = match (long.arg, attached) {
                (Arg::None, Some(_)) => return Err(Refusal::Unknown(w.clone())),
                (Arg::None, None) | (Arg::Optional, None) => None,
                (_, Some(v)) => Some(v),
                (Arg::Required, None) => {
                    let v = args
                        .get(i)
                        .ok_or_else(|| Refusal::MissingValue(w.clone()))?;
                    i += 1;
                    Some(v.clone())
                }
            };
            out.options.push((long.name.to_string(), value));
        } else if w.len() > 1 && w.starts_with('-') {
            let body = &w[1..];
            if g.digits && body.chars().all(|c| c.is_ascii_digit()) {
                out.options.push(("count".into(), Some(body.to_string())));
                continue;
            }
            for (at, c) in body.char_indices() {
                if g.flags.contains(c) {
                    out.options.push((c.to_string(), None));
                } else if g.valued.contains(c) {
                    let rest = &body[at + c.len_utf8()..];
                    let value = if rest.is_empty() {
                        let v = args
                            .get(i)
                            .ok_or_else(|| Refusal::MissingValue(w.clone()))?;
                        i += 1;
                        v.clone()
                    } else {
                        rest.to_string()
                    };
                    out.options.push((c.to_string(), Some(value)));
                    break;
                } else {
                    return Err(Refusal::Unknown(format!("-{c}")));
                }
            }
        } else {
            out.operands.push(w.clone());
        }
    }
    Ok(out)
}

/// An exact name, else the one long option `name` is a prefix of (when abbreviations apply).
fn resolve_long<'a>(g: &Grammar<'a>, name: &str) -> Result<Long<'a>, Refusal> {
    if name.is_empty() {
        return Err(Refusal::Unknown("--".into()));
    }
    if let Some(l) = longs(g.long).find(|l| l.name == name) {
        return Ok(l);
    }
    if !g.abbrev {
        return Err(Refusal::Unknown(format!("--{name}")));
    }
    let mut matches = longs(g.long).filter(|l| l.name.starts_with(name));
    match (matches.next(), matches.next()) {
        (Some(l), None) => Ok(l),
        (Some(_), Some(_)) => Err(Refusal::Ambiguous(format!("--{name}"))),
        (None, _) => Err(Refusal::Unknown(format!("--{name}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Grammar = Grammar {
        flags: "bcdfgiMhnRrsuzC",
        valued: "kStT",
        long: "check? !compress-program= !output= reverse numeric-sort key=",
        digits: false,
        abbrev: true,
    };

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn bundles_values_and_abbreviations() {
        let p = parse(&SORT, &words("-rn -k2,3 -k 1 --key=4 --rev file")).unwrap();
        assert_eq!(p.operands, vec!["file"]);
        assert!(p.has("reverse") && p.has("r") && p.has("n"));
        assert_eq!(p.options.iter().filter(|o| o.0 == "k").count(), 2);
        assert_eq!(
            parse(&SORT, &words("-ro out in")),
            Err(Refusal::Unknown("-o".into()))
        );
        assert_eq!(
            parse(&SORT, &words("--outp=x in")),
            Err(Refusal::Unsafe("--output".into()))
        );
        assert_eq!(
            parse(&SORT, &words("--co=sh")),
            Err(Refusal::Unsafe("--compress-program".into()))
        );
        // `--c` could be --check or --compress-program: GNU refuses, and so do we.
        assert!(matches!(
            parse(&SORT, &words("--c")),
            Err(Refusal::Ambiguous(_))
        ));
        // An exact name wins over a longer one it is a prefix of.
        assert!(parse(&SORT, &words("--check")).is_ok());
        assert!(matches!(
            parse(&SORT, &words("--reverse=1")),
            Err(Refusal::Unknown(_))
        ));
        assert!(matches!(
            parse(&SORT, &words("-k")),
            Err(Refusal::MissingValue(_))
        ));
    }

    #[test]
    fn double_dash_ends_options() {
        let p = parse(&SORT, &words("-r -- -o --output")).unwrap();
        assert_eq!(p.operands, vec!["-o", "--output"]);
        let exact = Grammar {
            abbrev: false,
            ..SORT
        };
        assert!(matches!(
            parse(&exact, &words("--rev")),
            Err(Refusal::Unknown(_))
        ));
    }
}
