//! [`Connection`]: where a Temporal server is and how payloads travel to it, shared by the
//! worker and the client of runs.

use temporalio_client::{Client, ClientOptions, ConnectionOptions};
use temporalio_common::data_converters::{
    DataConverter, DefaultFailureConverter, DefaultPayloadCodec, PayloadConverter,
};

use crate::codec::Codec;
use crate::error::TemporalError;

/// A Temporal server's address and namespace, and the payload codec (if any) both sides
/// of a run use.
#[derive(Debug, Clone)]
pub struct Connection {
    address: String,
    namespace: String,
    codec: Option<Codec>,
    identity: String,
}

impl Connection {
    /// The server at `address` (`HOST:PORT`, or an `http(s)://` URL), namespace `default`,
    /// no codec.
    pub fn new(address: impl Into<String>) -> Self {
        Connection {
            address: address.into(),
            namespace: "default".to_owned(),
            codec: None,
            identity: format!("toolnexus@{}", std::process::id()),
        }
    }

    /// The namespace runs live in.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// Encrypts every payload with `codec` (and opens those encrypted with its key).
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codec = Some(codec);
        self
    }

    /// How this process names itself to the server (default `toolnexus@PID`).
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = identity.into();
        self
    }

    /// Whether payloads are encrypted.
    pub fn encrypts(&self) -> bool {
        self.codec.is_some()
    }

    /// Connects.
    pub(crate) async fn client(&self) -> Result<Client, TemporalError> {
        let url = if self.address.contains("://") {
            self.address.clone()
        } else {
            format!("http://{}", self.address)
        };
        let url = url::Url::parse(&url).map_err(|_| TemporalError::Address {
            address: self.address.clone(),
        })?;
        let options = ConnectionOptions::new(url)
            .identity(self.identity.clone())
            .build();
        let connection = temporalio_client::Connection::connect(options)
            .await
            .map_err(|e| TemporalError::Connect {
                address: self.address.clone(),
                reason: e.to_string(),
            })?;
        let converter = match &self.codec {
            Some(codec) => DataConverter::new(
                PayloadConverter::default(),
                DefaultFailureConverter::default(),
                codec.clone(),
            ),
            None => DataConverter::new(
                PayloadConverter::default(),
                DefaultFailureConverter::default(),
                DefaultPayloadCodec,
            ),
        };
        let options = ClientOptions::new(self.namespace.clone())
            .data_converter(converter)
            .build();
        Client::new(connection, options).map_err(|e| TemporalError::Connect {
            address: self.address.clone(),
            reason: e.to_string(),
        })
    }
}
