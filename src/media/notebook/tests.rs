//! Tests of reading and editing notebooks: rendering, images, each edit mode,
//! notebooks without cell ids, other indentation and line endings, and that an
//! edited notebook is byte for byte what Jupyter itself would write.

use serde_json::Value;

use super::render::terminal_text;
use super::scan::Layout;
use super::writer::{Style, Writer, python_float};
use super::{Applied, CellType, EditMode, Notebook, NotebookEdit, apply};

/// Written by Python's `json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"`,
/// as nbformat does.
const FIXTURE: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "a1b2c3d4",
   "metadata": {},
   "source": [
    "# Title ✓\n",
    "Some *text* — ünïcode"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "code-two",
   "metadata": {
    "scrolled": false,
    "tags": []
   },
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "héllo\n"
     ]
    },
    {
     "data": {
      "text/plain": [
       "2"
      ]
     },
     "execution_count": 1,
     "metadata": {},
     "output_type": "execute_result"
    }
   ],
   "source": [
    "x = 1\n",
    "print(\"héllo\")\n",
    "x + 1"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 2,
   "id": "plot-3",
   "metadata": {},
   "outputs": [
    {
     "data": {
      "image/png": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n",
      "text/plain": [
       "<Figure size 640x480 with 1 Axes>"
      ]
     },
     "metadata": {
      "needs_background": "light"
     },
     "output_type": "display_data"
    },
    {
     "ename": "ZeroDivisionError",
     "evalue": "division by zero",
     "output_type": "error",
     "traceback": [
      "\u001b[0;31m---------------------------------------------------------------------------\u001b[0m",
      "\u001b[0;31mZeroDivisionError\u001b[0m                         Traceback (most recent call last)",
      "Cell \u001b[0;32mIn[2], line 2\u001b[0m\n\u001b[1;32m      1\u001b[0m plot()\n\u001b[0;32m----> 2\u001b[0m \u001b[38;5;241;43m1\u001b[39;49m\u001b[38;5;241;43m/\u001b[39;49m\u001b[38;5;241;43m0\u001b[39;49m\n",
      "\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"
     ]
    }
   ],
   "source": [
    "plot()\n",
    "1/0"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "empty-4",
   "metadata": {},
   "outputs": [],
   "source": []
  }
 ],
 "metadata": {
  "custom": {
   "big": 1e+16,
   "neg": -2.5,
   "ratio": 0.25,
   "tab": "a\tb\\c",
   "tiny": 1e-05
  },
  "kernelspec": {
   "display_name": "Python 3 (ipykernel)",
   "language": "python",
   "name": "python3"
  },
  "language_info": {
   "codemirror_mode": {
    "name": "ipython",
    "version": 3
   },
   "file_extension": ".py",
   "name": "python",
   "version": "3.11.4"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

/// nbformat 4.4: cells have no ids.
const NO_IDS: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": [
    "intro"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "metadata": {},
   "outputs": [
    {
     "name": "stderr",
     "output_type": "stream",
     "text": [
      "warn\n"
     ]
    }
   ],
   "source": [
    "y = 2"
   ]
  }
 ],
 "metadata": {
  "kernelspec": {
   "display_name": "R",
   "language": "R",
   "name": "ir"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 4
}
"##;

fn edit(mode: EditMode, id: Option<&str>, source: &str, kind: Option<CellType>) -> NotebookEdit {
    NotebookEdit {
        cell_id: id.map(str::to_string),
        new_source: source.to_string(),
        cell_type: kind,
        mode,
    }
}

fn apply_ok(text: &str, e: &NotebookEdit) -> Applied {
    match apply(text, e) {
        Ok(applied) => applied,
        Err(message) => panic!("edit failed: {message}"),
    }
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

fn cells(text: &str) -> Vec<Value> {
    parsed(text)["cells"].as_array().expect("cells").clone()
}

fn jupyter_text(text: &str) -> String {
    format!("{}\n", Writer::write(&Style::jupyter(), "", &parsed(text)))
}

/// The edited text is what Jupyter itself would write for the edited notebook.
fn assert_canonical(text: &str) {
    assert_eq!(jupyter_text(text), text);
}

/// Lines of `before` that differ from `after`, as a 0-based range of `before`'s lines.
fn changed_lines(before: &str, after: &str) -> std::ops::Range<usize> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take_while(|(a, b)| a == b)
        .count()
        .min(old.len() - prefix)
        .min(new.len() - prefix);
    prefix..old.len() - suffix
}

/// 0-based line range of cell `index` in `text`.
fn cell_lines(text: &str, index: usize) -> std::ops::Range<usize> {
    let layout = Layout::scan(text).expect("layout");
    let span = layout.cells[index];
    let line = |pos: usize| text[..pos].matches('\n').count();
    line(span.start)..line(span.end) + 1
}

fn notebook(text: &str) -> Notebook {
    Notebook::parse(text).expect("notebook")
}

#[test]
fn untouched_notebook_round_trips_byte_for_byte() {
    assert_eq!(jupyter_text(FIXTURE), FIXTURE);
    assert_eq!(jupyter_text(NO_IDS), NO_IDS);
}

#[test]
fn each_cell_span_serializes_to_its_own_text() {
    let layout = Layout::scan(FIXTURE).expect("layout");
    let style = Style::detect(FIXTURE);
    for (span, cell) in layout.cells.iter().zip(cells(FIXTURE)) {
        assert_eq!(
            Writer::write(&style, "  ", &cell),
            &FIXTURE[span.start..span.end]
        );
    }
}

#[test]
fn render_shows_cells_sources_and_outputs() {
    let text = notebook(FIXTURE).render();
    assert!(text.starts_with("<cell id=\"a1b2c3d4\"> (markdown)\n# Title ✓\n"));
    assert!(text.contains("<cell id=\"code-two\"> (code, execution_count 1)\nx = 1\n"));
    assert!(text.contains("<output>\nhéllo\n</output>\n<output>\n2\n</output>\n</cell>\n"));
    assert!(text.contains("<cell id=\"plot-3\"> (code, execution_count 2)\nplot()\n1/0\n"));
    assert!(text.contains("<Figure size 640x480 with 1 Axes>\n[image/png image output"));
    assert!(text.contains("<output type=\"error\">\nZeroDivisionError: division by zero\n"));
    assert!(text.contains("----> 2 1/0\n"));
    assert!(text.contains("<cell id=\"empty-4\"> (code)\n</cell>\n"));
    assert!(!text.contains('\u{1b}'));
    assert!(!text.contains("iVBORw0KGgo"));
    assert_eq!(text.matches("</cell>").count(), 4);
}

#[test]
fn images_returns_the_png() {
    let images = notebook(FIXTURE).images();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].cell_id, "plot-3");
    assert_eq!(images[0].media_type, "image/png");
    assert!(images[0].base64.starts_with("iVBORw0KGgo"));
    assert!(images[0].base64.ends_with("=="));
    assert_eq!(notebook(FIXTURE).cell_count(), 4);
}

#[test]
fn long_outputs_are_cut_with_a_note() {
    let mut root = parsed(NO_IDS);
    root["cells"][1]["outputs"][0]["text"] = Value::String("x".repeat(12_345));
    let text = notebook(&root.to_string()).render();
    assert!(text.contains("[output truncated: 2345 more characters not shown]"));
    assert!(text.len() < 10_500);
}

#[test]
fn terminal_text_drops_escapes_and_overwritten_progress() {
    assert_eq!(
        terminal_text("\u{1b}[1;31mred\u{1b}[0m \u{1b}]0;title\u{7}ok"),
        "red ok"
    );
    assert_eq!(terminal_text(" 10%\r 50%\r100%\ndone\r\n"), "100%\ndone\n");
}

#[test]
fn replace_sets_source_and_clears_outputs() {
    let applied = apply_ok(
        FIXTURE,
        &edit(
            EditMode::Replace,
            Some("code-two"),
            "a = 1\nb = \"ü ✓\"\n",
            None,
        ),
    );
    assert_eq!(applied.cell_id, "code-two");
    assert!(
        applied.summary.contains("outputs were cleared"),
        "{}",
        applied.summary
    );
    let cell = &cells(&applied.text)[1];
    assert_eq!(
        cell["source"],
        serde_json::json!(["a = 1\n", "b = \"ü ✓\"\n"])
    );
    assert_eq!(cell["outputs"], serde_json::json!([]));
    assert_eq!(cell["execution_count"], Value::Null);
    assert_eq!(cell["metadata"]["scrolled"], Value::Bool(false));
    assert!(applied.text.contains("\"b = \\\"ü ✓\\\"\\n\""));
    assert_canonical(&applied.text);
    let changed = changed_lines(FIXTURE, &applied.text);
    let cell_range = cell_lines(FIXTURE, 1);
    assert!(changed.start >= cell_range.start && changed.end <= cell_range.end);
    for (i, (old, new)) in cells(FIXTURE).iter().zip(cells(&applied.text)).enumerate() {
        if i != 1 {
            assert_eq!(*old, new);
        }
    }
}

#[test]
fn replace_with_type_change() {
    let to_markdown = edit(
        EditMode::Replace,
        Some("plot-3"),
        "# Notes",
        Some(CellType::Markdown),
    );
    let applied = apply_ok(FIXTURE, &to_markdown);
    assert!(applied.summary.contains("from code to markdown"));
    let cell = cells(&applied.text)[2].clone();
    let keys: Vec<&String> = cell.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["cell_type", "id", "metadata", "source"]);
    assert_eq!(cell["cell_type"], "markdown");
    assert_canonical(&applied.text);

    let to_code = edit(
        EditMode::Replace,
        Some("a1b2c3d4"),
        "print(1)",
        Some(CellType::Code),
    );
    let cell = cells(&apply_ok(FIXTURE, &to_code).text)[0].clone();
    let keys: Vec<&String> = cell.as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        [
            "cell_type",
            "execution_count",
            "id",
            "metadata",
            "outputs",
            "source"
        ]
    );
    assert_eq!(cell["source"], serde_json::json!(["print(1)"]));
}

#[test]
fn insert_after_a_cell() {
    let e = edit(
        EditMode::Insert,
        Some("code-two"),
        "z = 3\nz",
        Some(CellType::Code),
    );
    let applied = apply_ok(FIXTURE, &e);
    let all = cells(&applied.text);
    assert_eq!(all.len(), 5);
    let cell = &all[2];
    assert_eq!(cell["id"], Value::String(applied.cell_id.clone()));
    assert_eq!(applied.cell_id.len(), 8);
    assert!(applied.cell_id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(cell["source"], serde_json::json!(["z = 3\n", "z"]));
    assert_eq!(cell["outputs"], serde_json::json!([]));
    assert_eq!(cell["execution_count"], Value::Null);
    assert_eq!(cell["metadata"], serde_json::json!({}));
    assert_eq!(all[3]["id"], "plot-3");
    assert!(applied.summary.contains("after cell code-two"));
    assert_canonical(&applied.text);
    assert_eq!(apply_ok(FIXTURE, &e), applied, "ids are deterministic");
    let again = apply_ok(&applied.text, &e);
    assert_ne!(again.cell_id, applied.cell_id, "ids are unique");
}

#[test]
fn insert_at_start() {
    let e = edit(EditMode::Insert, None, "# Top", Some(CellType::Markdown));
    let applied = apply_ok(FIXTURE, &e);
    let all = cells(&applied.text);
    assert_eq!(all.len(), 5);
    assert_eq!(all[0]["cell_type"], "markdown");
    assert!(all[0].get("outputs").is_none());
    assert_eq!(all[1]["id"], "a1b2c3d4");
    assert_canonical(&applied.text);
}

#[test]
fn delete_removes_the_cell() {
    for (index, id) in ["a1b2c3d4", "code-two", "empty-4"].iter().enumerate() {
        let applied = apply_ok(FIXTURE, &edit(EditMode::Delete, Some(id), "", None));
        let ids: Vec<Value> = cells(&applied.text)
            .iter()
            .map(|c| c["id"].clone())
            .collect();
        assert_eq!(ids.len(), 3, "deleting {index}");
        assert!(!ids.contains(&Value::String((*id).to_string())));
        assert_canonical(&applied.text);
    }
}

#[test]
fn deleting_every_cell_then_inserting_keeps_jupyter_format() {
    let mut text = FIXTURE.to_string();
    for id in ["a1b2c3d4", "code-two", "plot-3", "empty-4"] {
        text = apply_ok(&text, &edit(EditMode::Delete, Some(id), "", None)).text;
    }
    assert!(text.contains("\"cells\": [],\n"));
    assert_canonical(&text);
    let e = edit(EditMode::Insert, None, "", Some(CellType::Code));
    text = apply_ok(&text, &e).text;
    assert_eq!(cells(&text).len(), 1);
    assert!(text.contains("\"source\": []\n"));
    assert_canonical(&text);
}

#[test]
fn unknown_id_errs_with_existing_ids() {
    let err = apply(FIXTURE, &edit(EditMode::Replace, Some("nope"), "x", None)).unwrap_err();
    assert!(err.contains("\"nope\""), "{err}");
    assert!(err.contains("a1b2c3d4, code-two, plot-3, empty-4"), "{err}");
    let err = apply(FIXTURE, &edit(EditMode::Delete, None, "", None)).unwrap_err();
    assert!(err.contains("cell_id is required"), "{err}");
}

#[test]
fn insert_without_cell_type_errs() {
    let err = apply(FIXTURE, &edit(EditMode::Insert, Some("plot-3"), "x", None)).unwrap_err();
    assert!(err.contains("cell_type"), "{err}");
}

#[test]
fn cells_without_ids_use_cell_n() {
    let nb = notebook(NO_IDS);
    let text = nb.render();
    assert!(
        text.contains("<cell id=\"cell-0\"> (markdown)\nintro\n</cell>\n"),
        "{text}"
    );
    assert!(text.contains("<cell id=\"cell-1\"> (code, language R, execution_count 3)\ny = 2\n"));
    assert!(text.contains("<output stream=\"stderr\">\nwarn\n</output>"));

    let applied = apply_ok(
        NO_IDS,
        &edit(EditMode::Replace, Some("cell-1"), "y = 3\n", None),
    );
    assert_eq!(applied.cell_id, "cell-1");
    assert_eq!(
        cells(&applied.text)[1]["source"],
        serde_json::json!(["y = 3\n"])
    );
    assert!(
        applied
            .text
            .starts_with(&NO_IDS[..NO_IDS.find("\"cell_type\": \"code\"").expect("code")])
    );

    let e = edit(
        EditMode::Insert,
        Some("cell-0"),
        "more",
        Some(CellType::Markdown),
    );
    let applied = apply_ok(NO_IDS, &e);
    assert_eq!(applied.cell_id, "cell-1");
    assert!(cells(&applied.text)[1].get("id").is_none());
    assert!(apply(NO_IDS, &edit(EditMode::Delete, Some("cell-2"), "", None)).is_err());
}

#[test]
fn invalid_input_errs_in_one_line() {
    for text in [
        "not json",
        "{\"cells\": 3}",
        "[1, 2]",
        "{\"worksheets\": []}",
    ] {
        let err = Notebook::parse(text).err().expect("error");
        assert!(!err.contains('\n'), "{err}");
        assert!(apply(text, &edit(EditMode::Delete, Some("x"), "", None)).is_err());
    }
    assert!(
        Notebook::parse("{")
            .err()
            .expect("error")
            .contains("invalid JSON")
    );
    assert!(
        Notebook::parse("{}")
            .err()
            .expect("error")
            .contains("no \"cells\" array")
    );
}

#[test]
fn other_indentation_and_line_endings_are_kept() {
    let colab = "{\r\n  \"nbformat\": 4,\r\n  \"nbformat_minor\": 0,\r\n  \"cells\": [\r\n    {\r\n      \"cell_type\": \"code\",\r\n      \"source\": [\"a\"],\r\n      \"metadata\": {\r\n        \"id\": \"x\"\r\n      },\r\n      \"execution_count\": 1,\r\n      \"outputs\": []\r\n    }\r\n  ],\r\n  \"metadata\": {}\r\n}";
    let applied = apply_ok(
        colab,
        &edit(EditMode::Replace, Some("cell-0"), "b\nc", None),
    );
    let expected = colab
        .replace(
            "\"source\": [\"a\"],",
            "\"source\": [\r\n        \"b\\n\",\r\n        \"c\"\r\n      ],",
        )
        .replace("\"execution_count\": 1", "\"execution_count\": null");
    assert_eq!(applied.text, expected);
    let e = edit(
        EditMode::Insert,
        Some("cell-0"),
        "",
        Some(CellType::Markdown),
    );
    let inserted = apply_ok(colab, &e).text;
    assert!(inserted.contains("    },\r\n    {\r\n      \"cell_type\": \"markdown\",\r\n      \"metadata\": {},\r\n      \"source\": []\r\n    }\r\n  ],"), "{inserted}");
    let compact = "{\"cells\":[{\"cell_type\":\"markdown\",\"metadata\":{},\"source\":\"a\"}]}";
    let e = edit(EditMode::Insert, None, "b", Some(CellType::Markdown));
    assert_eq!(
        apply_ok(compact, &e).text,
        "{\"cells\":[{\"cell_type\":\"markdown\",\"metadata\":{},\"source\":[\"b\"]},{\"cell_type\":\"markdown\",\"metadata\":{},\"source\":\"a\"}]}"
    );
}

#[test]
fn byte_order_mark_is_kept() {
    let text = format!("\u{feff}{FIXTURE}");
    let applied = apply_ok(&text, &edit(EditMode::Delete, Some("empty-4"), "", None));
    assert!(applied.text.starts_with('\u{feff}'));
    assert_eq!(notebook(&text).cell_count(), 4);
}

#[test]
fn floats_are_spelled_like_python() {
    let cases = [
        (0.25, "0.25"),
        (1.0, "1.0"),
        (-2.5, "-2.5"),
        (0.0, "0.0"),
        (1e-5, "1e-05"),
        (1.5e-7, "1.5e-07"),
        (0.0001, "0.0001"),
        (1e16, "1e+16"),
        (1.2345e20, "1.2345e+20"),
        (1e15, "1000000000000000.0"),
        (123.456, "123.456"),
        (1e300, "1e+300"),
    ];
    for (value, expected) in cases {
        assert_eq!(python_float(value), expected);
    }
}
