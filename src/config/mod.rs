//! Configuration: which model to talk to ([`model`]), settings layers and their merge, paths.

pub mod model;
