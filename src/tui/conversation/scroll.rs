//! PLACEHOLDER (branch tui-app) for the scroll state owned by the `tui-view` work.
//!
//! `offset` counts lines up from the bottom; 0 means following the bottom.

/// Where the conversation view is scrolled to. Default: following the bottom.
#[derive(Default)]
pub struct ScrollState {
    pub(crate) offset: usize,
    pub(crate) page: usize,
    pub(crate) new_below: bool,
}

impl ScrollState {
    pub fn scroll_up(&mut self, lines: usize) {
        self.offset = self.offset.saturating_add(lines);
    }
    pub fn scroll_down(&mut self, lines: usize) {
        self.offset = self.offset.saturating_sub(lines);
        if self.offset == 0 {
            self.new_below = false;
        }
    }
    pub fn page_up(&mut self) {
        self.scroll_up(self.page.max(1));
    }
    pub fn page_down(&mut self) {
        self.scroll_down(self.page.max(1));
    }
    pub fn to_top(&mut self) {
        self.offset = usize::MAX / 2;
    }
    pub fn to_bottom(&mut self) {
        self.offset = 0;
        self.new_below = false;
    }
    pub fn is_following(&self) -> bool {
        self.offset == 0
    }
    /// True when the person scrolled up and new output arrived below.
    pub fn new_output_below(&self) -> bool {
        self.new_below
    }
}
