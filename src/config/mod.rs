//! Configuration: which model to talk to ([`model`]), the settings layers ([`layers`]) and
//! their merge ([`settings`]), and saving "always allow" rules ([`local`]).

pub mod layers;
pub mod local;
pub mod model;
pub mod settings;

pub use settings::{LoadedSettings, load_settings, render_config};
