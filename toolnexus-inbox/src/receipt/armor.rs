//! PEM armor (RFC 7468) around the DER of keys: what `openssl` reads and writes.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::error::ReceiptError;

/// The DER inside the first `label` block of `text` (`-----BEGIN {label}-----`).
pub(super) fn unwrap(text: &str, label: &str) -> Result<Vec<u8>, ReceiptError> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text
        .find(&begin)
        .ok_or_else(|| ReceiptError::InvalidKey(format!("no `{begin}` line")))?;
    let body = &text[start + begin.len()..];
    let stop = body
        .find(&end)
        .ok_or_else(|| ReceiptError::InvalidKey(format!("no `{end}` line")))?;
    let base64: String = body[..stop]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    STANDARD
        .decode(base64)
        .map_err(|_| ReceiptError::InvalidKey(format!("the {label} block is not base64")))
}

/// `der` in a `label` block, its base64 in lines of 64 characters.
pub(super) fn wrap(der: &[u8], label: &str) -> String {
    let base64 = STANDARD.encode(der);
    let mut text = format!("-----BEGIN {label}-----\n");
    for line in base64.as_bytes().chunks(64) {
        // Base64 is ASCII, so every chunk is UTF-8.
        text.push_str(std::str::from_utf8(line).unwrap_or_default());
        text.push('\n');
    }
    text.push_str(&format!("-----END {label}-----\n"));
    text
}
