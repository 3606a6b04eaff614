//! The text of key and trust files: a file read with a bound on its size, its content lines, a
//! public key line parsed, and a file's text quoted for an error message.

use super::error::io_error;
use super::{KeyError, PublicKey, KEY_LEN, KEY_TYPE, MAX_FILE, PRIVATE_KEY_TYPE, PUBLIC_FORMAT};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use zeroize::{Zeroize, Zeroizing};

/// `longhaul-x25519 <base64> [comment]`; the problem in words otherwise.
pub(super) fn parse_public(line: &str) -> Result<(PublicKey, Option<String>), String> {
    let (word, rest) = split_word(line);
    if word != KEY_TYPE {
        return Err(match word {
            "" => format!("no key: expected {PUBLIC_FORMAT}"),
            PRIVATE_KEY_TYPE => "this is a private key: use the line of the `.pub` file beside \
                                 it, and keep the private key secret"
                .into(),
            w if w.starts_with("ssh-") || w.starts_with("ecdsa-") => format!(
                "{} is an ssh key; longhaul has keys of its own (`longhaul keygen`): \
                 expected {PUBLIC_FORMAT}",
                shown(w)
            ),
            _ => format!("expected {PUBLIC_FORMAT}, found {}", shown(line)),
        });
    }
    let (key, comment) = split_word(rest);
    if key.is_empty() {
        return Err(format!(
            "`{KEY_TYPE}` without a key: expected {PUBLIC_FORMAT}"
        ));
    }
    let key = decode_key(key)?;
    Ok((
        PublicKey(key),
        Some(comment.to_string()).filter(|c| !c.is_empty()),
    ))
}

/// 32 bytes in standard base64 (44 characters with the padding).
pub(super) fn decode_key(text: &str) -> Result<[u8; KEY_LEN], String> {
    let bytes = Zeroizing::new(
        STANDARD
            .decode(text)
            .map_err(|e| format!("the key is not valid base64 ({e})"))?,
    );
    <[u8; KEY_LEN]>::try_from(bytes.as_slice()).map_err(|_| {
        format!(
            "the key decodes to {} bytes; a longhaul key has {KEY_LEN}",
            bytes.len()
        )
    })
}

/// The first whitespace-separated word and the rest, trimmed.
pub(super) fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}

/// The lines that carry content (1-based numbers), without blank and `#` lines.
pub(super) fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// A file's text, bounded in size; bytes that are not UTF-8 are an error naming their line.
pub(super) fn read_text(path: &Path, file: File) -> Result<String, KeyError> {
    let meta = file.metadata().map_err(io_error(path))?;
    if !meta.is_file() {
        return Err(KeyError::NotAFile { path: path.into() });
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error(path))?;
    if bytes.len() as u64 > MAX_FILE {
        bytes.zeroize();
        return Err(KeyError::TooLarge { path: path.into() });
    }
    String::from_utf8(bytes).map_err(|e| {
        let line = e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        e.into_bytes().zeroize();
        KeyError::Parse {
            path: path.into(),
            line,
            problem: "not text (UTF-8): is this the right file?".into(),
        }
    })
}

/// Text from a file, quoted for an error message: escaped and cut short.
pub(super) fn shown(s: &str) -> String {
    const MAX: usize = 40;
    let cut: String = s.chars().take(MAX).collect();
    let more = if s.chars().count() > MAX { "…" } else { "" };
    format!("`{}{more}`", cut.escape_debug())
}
