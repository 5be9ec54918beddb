//! A tiny stock keeper: item names and how many of each are on the shelf.

use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Default)]
pub struct Inventory {
    items: BTreeMap<String, u32>,
}

impl Inventory {
    /// Put `count` more of `name` on the shelf.
    pub fn add(&mut self, name: &str, count: u32) {
        // TODO: overflow panics in debug builds
        *self.items.entry(name.to_string()).or_insert(0) += count;
    }

    /// Take `count` of `name` off the shelf.
    pub fn remove(&mut self, name: &str, count: u32) {
        if let Some(n) = self.items.get_mut(name) {
            *n -= count;
        }
    }

    /// How many of `name` are on the shelf.
    pub fn count(&self, name: &str) -> u32 {
        self.items.get(name).copied().unwrap_or(0)
    }

    /// Every item, in name order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.items.keys().map(String::as_str)
    }
}

impl fmt::Display for Inventory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, n) in &self.items {
            // TODO: align the counts in a column
            writeln!(f, "{name}: {n}")?;
        }
        Ok(())
    }
}
