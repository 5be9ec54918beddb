//! PLACEHOLDER (branch tui-app) for the Markdown renderer owned by the `tui-view` work.
//! The lead replaces this file with the real one at merge.
