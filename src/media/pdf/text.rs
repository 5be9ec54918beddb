//! The content-stream text walk: decoding a page's content (and the form XObjects it
//! draws) operator by operator, mapping shown strings to text through each font's
//! encoding or `ToUnicode` map, and guessing line breaks and word spaces from text
//! positioning (`Td`, `Tm`, `T*`, `TJ` adjustments). Content size and form nesting are
//! capped so an untrusted page cannot make the walk run away.

use std::collections::BTreeMap;

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Encoding, Object, ObjectId, Stream};

/// The most content bytes (page streams and the forms they draw) decoded for one page.
const MAX_PAGE_CONTENT_BYTES: usize = 32 << 20;

/// How deeply form XObjects may nest inside one page.
const MAX_FORM_DEPTH: usize = 8;

/// A `TJ` adjustment below this (thousandths of an em, moving right) reads as a word space.
const TJ_SPACE: f32 = -100.0;

/// The raw text of one page: its content streams, then any forms they draw, in drawing order.
pub(super) fn extract_page(doc: &Document, page_id: ObjectId) -> lopdf::Result<String> {
    let content = doc.get_page_content_with_limit(page_id, MAX_PAGE_CONTENT_BYTES)?;
    let (inline, referenced) = doc.get_page_resources(page_id)?;
    let dicts: Vec<&Dictionary> = inline
        .into_iter()
        .chain(
            referenced
                .iter()
                .filter_map(|&id| doc.get_dictionary(id).ok()),
        )
        .collect();
    let scope = Scope::new(doc, &dicts);
    let mut walker = Walker {
        doc,
        out: String::new(),
        budget: MAX_PAGE_CONTENT_BYTES.saturating_sub(content.len()),
        forms: Vec::new(),
    };
    walker.walk(&content, &scope);
    Ok(walker.out)
}

/// The fonts and XObjects a content stream can name.
struct Scope<'a> {
    fonts: BTreeMap<Vec<u8>, Encoding<'a>>,
    xobjects: BTreeMap<Vec<u8>, ObjectId>,
}

impl<'a> Scope<'a> {
    /// From resource dictionaries, the first to define a name winning.
    fn new(doc: &'a Document, resources: &[&'a Dictionary]) -> Scope<'a> {
        let mut scope = Scope {
            fonts: BTreeMap::new(),
            xobjects: BTreeMap::new(),
        };
        for &dict in resources {
            for (name, value) in sub_dict(doc, dict, b"Font")
                .into_iter()
                .flat_map(|d| d.iter())
            {
                if !scope.fonts.contains_key(name)
                    && let Some(encoding) = font_encoding(doc, value)
                {
                    scope.fonts.insert(name.clone(), encoding);
                }
            }
            for (name, value) in sub_dict(doc, dict, b"XObject")
                .into_iter()
                .flat_map(|d| d.iter())
            {
                if let Object::Reference(id) = value {
                    scope.xobjects.entry(name.clone()).or_insert(*id);
                }
            }
        }
        scope
    }
}

/// `dict[key]` as a dictionary, following a reference.
fn sub_dict<'a>(doc: &'a Document, dict: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
    let value = dict.get(key).ok()?;
    doc.dereference(value).ok()?.1.as_dict().ok()
}

/// How the font `value` (a font dictionary or a reference to one) maps codes to text.
fn font_encoding<'a>(doc: &'a Document, value: &'a Object) -> Option<Encoding<'a>> {
    let font = doc.dereference(value).ok()?.1.as_dict().ok()?;
    font.get_font_encoding_with_limit(doc, MAX_PAGE_CONTENT_BYTES)
        .ok()
}

/// Collects the text of a page while walking its content.
struct Walker<'a> {
    doc: &'a Document,
    out: String,
    /// Content bytes still allowed to be decoded for forms.
    budget: usize,
    /// The forms being walked, outermost first: guards against cycles and deep nesting.
    forms: Vec<ObjectId>,
}

/// Where text is being placed: the text line matrix and the font size.
struct TextState<'s, 'a> {
    encoding: Option<&'s Encoding<'a>>,
    size: f32,
    /// The line matrix `[a b c d e f]`.
    line: [f32; 6],
}

impl<'a> Walker<'a> {
    /// Walks one content stream, stopping quietly at the first syntax error.
    fn walk(&mut self, content: &[u8], scope: &Scope<'a>) {
        let mut state = TextState {
            encoding: None,
            size: 0.0,
            line: IDENTITY,
        };
        for operation in Content::decode_iter(content) {
            let Ok(operation) = operation else { break };
            self.apply(&operation, scope, &mut state);
        }
    }

    /// Acts on one operator.
    fn apply<'s>(&mut self, op: &Operation, scope: &'s Scope<'a>, state: &mut TextState<'s, 'a>) {
        let operands = op.operands.as_slice();
        match op.operator.as_str() {
            "BT" => state.line = IDENTITY,
            "ET" | "T*" => self.newline(),
            "Tf" => {
                let name = operands.first().and_then(|name| name.as_name().ok());
                state.encoding = name.and_then(|name| scope.fonts.get(name));
                state.size = number(operands, 1).unwrap_or(0.0);
            }
            "Td" | "TD" => self.move_line(state, number(operands, 0), number(operands, 1)),
            "Tm" => self.set_line(state, operands),
            "Tj" | "TJ" => self.show(state, operands),
            "'" => {
                self.newline();
                self.show(state, operands);
            }
            "\"" => {
                self.newline();
                self.show(state, operands.get(2..).unwrap_or_default());
            }
            "Do" => {
                if let Some(name) = operands.first().and_then(|name| name.as_name().ok()) {
                    self.draw_form(name, scope);
                }
            }
            _ => {}
        }
    }

    /// `Td`: a move down or up starts a line; a move along the line separates words.
    fn move_line(&mut self, state: &mut TextState, tx: Option<f32>, ty: Option<f32>) {
        let (tx, ty) = (tx.unwrap_or(0.0), ty.unwrap_or(0.0));
        let [a, b, c, d, e, f] = state.line;
        state.line = [a, b, c, d, tx * a + ty * c + e, tx * b + ty * d + f];
        let tolerance = if state.size > 0.0 {
            0.3 * state.size
        } else {
            0.0
        };
        if ty.abs() > tolerance {
            self.newline();
        } else {
            self.space();
        }
    }

    /// `Tm`: a new baseline starts a line; the same baseline separates words.
    fn set_line(&mut self, state: &mut TextState, operands: &[Object]) {
        let mut matrix = IDENTITY;
        for (index, slot) in matrix.iter_mut().enumerate() {
            *slot = number(operands, index).unwrap_or(*slot);
        }
        let scale = matrix[3].abs().max(f32::EPSILON);
        let tolerance = (0.3 * state.size * scale).max(0.5);
        let moved_down = (matrix[5] - state.line[5]).abs() > tolerance;
        state.line = matrix;
        if moved_down {
            self.newline();
        } else {
            self.space();
        }
    }

    /// `Tj`, `TJ` and the string of `'` and `"`: decodes the strings with the current font.
    fn show(&mut self, state: &TextState, operands: &[Object]) {
        let Some(encoding) = state.encoding else {
            return;
        };
        for operand in operands {
            match operand {
                Object::String(bytes, _) => {
                    // A code the font cannot map is dropped, like the rest of that string.
                    let _ = encoding.write_to_string(bytes, &mut self.out);
                }
                Object::Array(items) => self.show(state, items),
                shift if shift.as_float().is_ok_and(|shift| shift < TJ_SPACE) => self.space(),
                _ => {}
            }
        }
    }

    /// `Do`: walks a form XObject's content, with its own resources if it has any.
    fn draw_form(&mut self, name: &[u8], scope: &Scope<'a>) {
        let Some(&id) = scope.xobjects.get(name) else {
            return;
        };
        if self.forms.len() >= MAX_FORM_DEPTH || self.forms.contains(&id) {
            return;
        }
        let Some(form) = form_stream(self.doc, id) else {
            return;
        };
        let Ok(content) = form.get_plain_content_with_limit(self.budget) else {
            return;
        };
        self.budget = self.budget.saturating_sub(content.len());
        let own =
            sub_dict(self.doc, &form.dict, b"Resources").map(|dict| Scope::new(self.doc, &[dict]));
        self.forms.push(id);
        self.walk(&content, own.as_ref().unwrap_or(scope));
        self.forms.pop();
    }

    /// Ends the current line, unless there is none.
    fn newline(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }

    /// Separates words, unless the text already ends in white space.
    fn space(&mut self) {
        if self
            .out
            .chars()
            .next_back()
            .is_some_and(|last| !last.is_whitespace())
        {
            self.out.push(' ');
        }
    }
}

/// The identity matrix.
const IDENTITY: [f32; 6] = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// The numeric operand at `index`.
fn number(operands: &[Object], index: usize) -> Option<f32> {
    operands.get(index)?.as_float().ok()
}

/// Object `id` if it is a form XObject.
fn form_stream(doc: &Document, id: ObjectId) -> Option<&Stream> {
    let stream = doc.get_object(id).ok()?.as_stream().ok()?;
    let subtype = stream.dict.get(b"Subtype").ok()?.as_name().ok()?;
    (subtype == b"Form").then_some(stream)
}
