//! Writing JSON the way Jupyter does (`json.dumps(indent=…, ensure_ascii=False)`):
//! the file's [`Style`] (line ending and indentation unit), the [`Writer`] that
//! serializes a value in that style with Python's string escapes and float
//! spelling, and cell sources as Jupyter stores them (a list of lines).

use serde_json::{Map, Value};

/// The file's formatting: its line ending and indentation unit (`None`: compact).
pub(super) struct Style {
    pub(super) newline: &'static str,
    pub(super) unit: Option<String>,
}

impl Style {
    /// Read the style from the whitespace after the top-level `{`.
    pub(super) fn detect(text: &str) -> Style {
        let after = text.trim_start();
        let after = after.strip_prefix('{').unwrap_or(after);
        let gap = &after[..after.len() - after.trim_start().len()];
        match gap.rfind('\n') {
            Some(i) => Style {
                newline: if gap.contains("\r\n") { "\r\n" } else { "\n" },
                unit: Some(gap[i + 1..].to_string()),
            },
            None => Style {
                newline: "\n",
                unit: None,
            },
        }
    }

    /// Jupyter's own style: `json.dumps(indent=1)`.
    #[cfg(test)]
    pub(super) fn jupyter() -> Style {
        Style {
            newline: "\n",
            unit: Some(" ".to_string()),
        }
    }
}

/// Serializes values like Python's `json.dumps(indent=…, ensure_ascii=False)`.
pub(super) struct Writer<'a> {
    out: String,
    style: &'a Style,
    /// Indentation of the line the value starts on.
    base: &'a str,
}

impl Writer<'_> {
    pub(super) fn write(style: &Style, base: &str, value: &Value) -> String {
        let mut writer = Writer {
            out: String::new(),
            style,
            base,
        };
        writer.value(value, 0);
        writer.out
    }

    fn line_break(&mut self, depth: usize) {
        if let Some(unit) = &self.style.unit {
            self.out.push_str(self.style.newline);
            self.out.push_str(self.base);
            for _ in 0..depth {
                self.out.push_str(unit);
            }
        }
    }

    fn value(&mut self, value: &Value, depth: usize) {
        match value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => self.out.push_str(&number_text(n)),
            Value::String(s) => push_json_string(&mut self.out, s),
            Value::Array(items) => self.array(items, depth),
            Value::Object(map) => self.object(map, depth),
        }
    }

    fn array(&mut self, items: &[Value], depth: usize) {
        if items.is_empty() {
            self.out.push_str("[]");
            return;
        }
        self.out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.line_break(depth + 1);
            self.value(item, depth + 1);
        }
        self.line_break(depth);
        self.out.push(']');
    }

    fn object(&mut self, map: &Map<String, Value>, depth: usize) {
        if map.is_empty() {
            self.out.push_str("{}");
            return;
        }
        let colon = if self.style.unit.is_some() { ": " } else { ":" };
        self.out.push('{');
        for (i, (key, item)) in map.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.line_break(depth + 1);
            push_json_string(&mut self.out, key);
            self.out.push_str(colon);
            self.value(item, depth + 1);
        }
        self.line_break(depth);
        self.out.push('}');
    }
}

/// A JSON string with Python's escapes (`ensure_ascii=False`).
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn number_text(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(x) if n.is_f64() => python_float(x),
        _ => n.to_string(),
    }
}

/// A float spelled like Python's `repr`: `0.25`, `1.0`, `1e-05`, `1e+16`.
pub(super) fn python_float(x: f64) -> String {
    let scientific = format!("{x:e}");
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return x.to_string();
    };
    let Ok(exponent) = exponent.parse::<i32>() else {
        return x.to_string();
    };
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let body = if !(-4..16).contains(&exponent) {
        python_scientific(&digits, exponent)
    } else if let Ok(exponent) = usize::try_from(exponent) {
        python_positional(&digits, exponent + 1)
    } else {
        let zeros = "0".repeat(usize::try_from(-exponent - 1).unwrap_or(0));
        format!("0.{zeros}{digits}")
    };
    format!("{sign}{body}")
}

fn python_scientific(digits: &str, exponent: i32) -> String {
    let (first, rest) = digits.split_at(1.min(digits.len()));
    let point = if rest.is_empty() { "" } else { "." };
    let exp_sign = if exponent < 0 { '-' } else { '+' };
    format!("{first}{point}{rest}e{exp_sign}{:02}", exponent.abs())
}

fn python_positional(digits: &str, int_len: usize) -> String {
    if digits.len() <= int_len {
        let zeros = "0".repeat(int_len - digits.len());
        format!("{digits}{zeros}.0")
    } else {
        let (int, frac) = digits.split_at(int_len);
        format!("{int}.{frac}")
    }
}

/// Source as Jupyter stores it: lines keeping their `\n`, except the last.
pub(super) fn source_lines(source: &str) -> Value {
    Value::Array(
        source
            .split_inclusive('\n')
            .map(|line| Value::String(line.to_string()))
            .collect(),
    )
}
