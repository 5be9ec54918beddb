//! One row of a picker: what is shown and what is inserted. Its own file because overlays
//! report a picked item (`overlay::Message::Picked`) without depending on the picker itself.

/// One row: what is shown and what is inserted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerItem {
    pub label: String,
    pub detail: String,
}
