//! Building a client for an endpoint. Placeholder; replaced by the model-clients work.

use std::sync::Arc;
use std::time::Duration;

use super::{LlmError, ModelClient};
use crate::config::model::ModelEndpoint;

#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub idle_timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            idle_timeout: Duration::from_secs(120),
        }
    }
}

pub fn build_client(
    _endpoint: &ModelEndpoint,
    _opts: &ClientOptions,
) -> Result<Arc<dyn ModelClient>, LlmError> {
    Err(LlmError::Connect("model clients are not built yet".into()))
}
