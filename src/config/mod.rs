//! Configuration: which model to talk to ([`model`]), settings layers and their merge, paths.

pub mod model;

/// What `cairn config` prints. Placeholder until settings layers land.
pub fn describe(project_dir: &std::path::Path) -> String {
    format!(
        "project: {}\n(no settings layers loaded)",
        project_dir.display()
    )
}
