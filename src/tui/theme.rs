//! Colours and text styles of the conversation view.
//!
//! One [`Theme`] value holds every style the renderer uses, so no widget picks colours ad hoc and
//! a light theme is one constructor away. Only the 16 named terminal colours are used, so the
//! person's terminal palette decides the exact shades (and reads well on dark and light
//! backgrounds); syntax highlighting is the one place with RGB colours.

use ratatui::style::{Color, Modifier, Style};

/// Every style the conversation view draws with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub user_prefix: Style,
    pub user_text: Style,
    pub assistant_bullet: Style,
    pub text: Style,
    pub dim: Style,
    pub thinking: Style,
    pub heading: [Style; 3],
    pub emphasis: Style,
    pub strong: Style,
    pub strikethrough: Style,
    pub inline_code: Style,
    pub code_block: Style,
    pub link: Style,
    pub quote: Style,
    pub rule: Style,
    pub table_border: Style,
    pub table_header: Style,
    pub tool_title: Style,
    pub tool_running: Style,
    pub tool_waiting: Style,
    pub tool_done: Style,
    pub tool_error: Style,
    pub tool_denied: Style,
    pub tool_body: Style,
    pub hint: Style,
    pub diff_added: Style,
    pub diff_removed: Style,
    pub diff_added_emph: Style,
    pub diff_removed_emph: Style,
    pub diff_line_no: Style,
    pub diff_header: Style,
    pub match_path: Style,
    pub match_line_no: Style,
    pub match_hit: Style,
    pub stderr: Style,
    pub notice_info: Style,
    pub notice_warning: Style,
    pub notice_error: Style,
    pub focus: Style,
    pub new_output_marker: Style,
}

impl Default for Theme {
    fn default() -> Theme {
        Theme::dark()
    }
}

impl Theme {
    /// The default theme, tuned for dark backgrounds but legible on light ones.
    pub fn dark() -> Theme {
        let plain = Style::default();
        let bold = Modifier::BOLD;
        Theme {
            user_prefix: plain.fg(Color::Cyan).add_modifier(bold),
            user_text: plain.add_modifier(bold),
            assistant_bullet: plain.fg(Color::White),
            text: plain,
            dim: plain.fg(Color::DarkGray),
            thinking: plain.fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
            heading: [
                plain
                    .fg(Color::Magenta)
                    .add_modifier(bold | Modifier::UNDERLINED),
                plain.fg(Color::Magenta).add_modifier(bold),
                plain.add_modifier(bold | Modifier::ITALIC),
            ],
            emphasis: plain.add_modifier(Modifier::ITALIC),
            strong: plain.add_modifier(bold),
            strikethrough: plain.add_modifier(Modifier::CROSSED_OUT),
            inline_code: plain.fg(Color::Yellow),
            code_block: plain.fg(Color::Yellow),
            link: plain.fg(Color::Blue).add_modifier(Modifier::UNDERLINED),
            quote: plain.fg(Color::Gray).add_modifier(Modifier::ITALIC),
            rule: plain.fg(Color::DarkGray),
            table_border: plain.fg(Color::DarkGray),
            table_header: plain.add_modifier(bold),
            tool_title: plain.add_modifier(bold),
            tool_running: plain.fg(Color::Cyan),
            tool_waiting: plain.fg(Color::Yellow),
            tool_done: plain.fg(Color::Green),
            tool_error: plain.fg(Color::Red),
            tool_denied: plain.fg(Color::Yellow),
            tool_body: plain.fg(Color::Gray),
            hint: plain.fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
            diff_added: plain.fg(Color::Green),
            diff_removed: plain.fg(Color::Red),
            diff_added_emph: plain.fg(Color::Black).bg(Color::Green).add_modifier(bold),
            diff_removed_emph: plain.fg(Color::Black).bg(Color::Red).add_modifier(bold),
            diff_line_no: plain.fg(Color::DarkGray),
            diff_header: plain.add_modifier(bold),
            match_path: plain.fg(Color::Magenta),
            match_line_no: plain.fg(Color::Green),
            match_hit: plain.fg(Color::Red).add_modifier(bold),
            stderr: plain.fg(Color::Red),
            notice_info: plain.fg(Color::Blue),
            notice_warning: plain.fg(Color::Yellow),
            notice_error: plain.fg(Color::Red).add_modifier(bold),
            focus: plain.add_modifier(Modifier::REVERSED),
            new_output_marker: plain.fg(Color::Black).bg(Color::Yellow).add_modifier(bold),
        }
    }
}
