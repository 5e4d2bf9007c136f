//! Reading an answer's body with a cap, so that no answer can make the process buffer more.

use futures::io::AsyncReadExt;
use load_core::node_stats::ParseError;
use load_core::{SourceError, source::SourceErrorKind};

/// The whole body, or [`ParseError::TooLarge`] when its announced length or the bytes
/// that came are over `cap` (reading stops one byte past it).
pub(crate) async fn read_body(
    response: &mut surf::Response,
    cap: usize,
) -> Result<Vec<u8>, SourceError> {
    if let Some(len) = response.len()
        && len > cap
    {
        return Err(ParseError::TooLarge { len, limit: cap }.into());
    }
    let body = read_capped(response, cap).await?;
    if body.len() > cap {
        return Err(ParseError::TooLarge {
            len: body.len(),
            limit: cap,
        }
        .into());
    }
    Ok(body)
}

/// Reads at most `cap + 1` bytes of the body, so that "longer than `cap`" shows without
/// buffering more.
pub(crate) async fn read_capped(
    response: &mut surf::Response,
    cap: usize,
) -> Result<Vec<u8>, SourceError> {
    let mut reader = response.take_body().into_reader().take(cap as u64 + 1);
    let mut body = Vec::new();
    reader
        .read_to_end(&mut body)
        .await
        .map_err(|e| SourceError::new(SourceErrorKind::Io, &e.to_string()))?;
    Ok(body)
}
