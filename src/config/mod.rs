//! Configuration: which model to talk to ([`model`]), the settings layers ([`layers`]) and
//! their merge ([`settings`]), the hooks they configure ([`hooks`]), saving "always allow"
//! rules ([`local`]), and checking the model's writes to settings files ([`settings_write`]). Rules are parsed with the rule language in `crate::rules`; deciding with
//! them and running hooks is `permissions`' business (which imports this, never the reverse).

pub mod appearance;
pub mod hooks;
pub mod keys;
pub mod layers;
pub mod local;
pub mod lsp_servers;
pub mod model;
pub mod plugins;
pub mod settings;
pub mod settings_write;
pub mod snapshot;
pub mod tool_search;
pub mod tracked;
pub mod trust;
pub mod untrusted;
pub mod web_search;

pub use settings::{LoadedSettings, load_settings, render_config};
pub use trust::Trust;
