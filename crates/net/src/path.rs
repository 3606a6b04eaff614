//! Relative paths a sender may name, and names made safe to print.
//!
//! A transfer carries each file's path relative to the receiver's directory. The receiver
//! accepts only paths that cannot leave that directory or confuse a person reading its log:
//! UTF-8, `/`-separated, every component a plain name (not empty, `.` or `..`, no NUL, no
//! control character, at most [`MAX_COMPONENT`] bytes), at most [`MAX_PATH`] bytes in all, and
//! not under the receiver's own staging directory ([`STAGING_DIR`]), so no sender can name a
//! part file or journal of another transfer. Symbolic links on the receiving side are handled
//! where files are created (`store`): no write ever goes through one.

use std::fmt;

/// Linux `NAME_MAX`: the longest name of one directory entry.
pub const MAX_COMPONENT: usize = 255;
/// The longest relative path accepted (Linux `PATH_MAX` is 4096 with the terminating NUL).
pub const MAX_PATH: usize = 4095;
/// Where the receiver keeps part files and journals, inside its directory.
pub const STAGING_DIR: &str = ".longhaul-partial";

/// Why a path was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path is empty.
    #[error("empty path")]
    Empty,
    /// The path is longer than [`MAX_PATH`] bytes.
    #[error("path of {0} bytes; at most {MAX_PATH}")]
    TooLong(usize),
    /// The path starts with `/`.
    #[error("absolute path {0}: paths are relative to the receiving directory")]
    Absolute(Printable),
    /// A component is empty, `.` or `..`.
    #[error("path {0} has an empty, `.` or `..` component")]
    Dots(Printable),
    /// A component is longer than [`MAX_COMPONENT`] bytes: (path, its length).
    #[error("path {0} has a component of {1} bytes; at most {MAX_COMPONENT}")]
    ComponentTooLong(Printable, usize),
    /// The path holds a NUL or another control character.
    #[error("path {0} contains a NUL or control character")]
    Control(Printable),
    /// The path lies under [`STAGING_DIR`].
    #[error("path {0} is inside the receiver's staging directory {STAGING_DIR}")]
    Reserved(Printable),
    /// A name on the sender's file system is not UTF-8.
    #[error("file name {0} is not UTF-8; rename it to send it")]
    NotUtf8(Printable),
}

/// Check a relative path as the receiver will (the sender checks first, to fail early).
pub fn check_relative(path: &str) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.len() > MAX_PATH {
        return Err(PathError::TooLong(path.len()));
    }
    if path.starts_with('/') {
        return Err(PathError::Absolute(Printable::from(path)));
    }
    if path.chars().any(char::is_control) {
        return Err(PathError::Control(Printable::from(path)));
    }
    for (i, c) in path.split('/').enumerate() {
        if c.is_empty() || c == "." || c == ".." {
            return Err(PathError::Dots(Printable::from(path)));
        }
        if c.len() > MAX_COMPONENT {
            return Err(PathError::ComponentTooLong(Printable::from(path), c.len()));
        }
        if i == 0 && c == STAGING_DIR {
            return Err(PathError::Reserved(Printable::from(path)));
        }
    }
    Ok(())
}

/// A symbolic link at `link` (a checked relative path) pointing at `target` stays inside the
/// tree: the target is relative and, resolved lexically from the link's directory, never
/// climbs above the root. (rsync's `--safe-links` rule; links elsewhere are refused.)
pub fn link_stays_inside(link: &str, target: &str) -> bool {
    if target.is_empty() || target.starts_with('/') || target.chars().any(char::is_control) {
        return false;
    }
    // Depth of the link's directory below the root.
    let mut depth = link.split('/').count() as i64 - 1;
    for c in target.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => depth += 1,
        }
    }
    true
}

/// A name as it may be printed: control characters and invalid UTF-8 escaped (`\n`, `\x1b`),
/// so a hostile name cannot forge log lines or drive a terminal.
#[derive(Clone, PartialEq, Eq)]
pub struct Printable(String);

impl From<&str> for Printable {
    fn from(s: &str) -> Printable {
        Printable(s.chars().flat_map(char::escape_debug).collect::<String>())
    }
}

impl Printable {
    /// Bytes that may not be UTF-8, escaped as ASCII.
    pub fn bytes(b: &[u8]) -> Printable {
        Printable(b.escape_ascii().to_string())
    }
}

impl fmt::Display for Printable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.0)
    }
}

impl fmt::Debug for Printable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_could_leave_the_directory_are_refused() {
        for bad in [
            "",
            "/etc/passwd",
            "..",
            "../x",
            "a/../../x",
            "a//b",
            "a/./b",
            "a/",
            "nul\0x",
            "new\nline",
            "esc\x1b[31m",
            ".longhaul-partial/abc.part",
        ] {
            assert!(check_relative(bad).is_err(), "{bad:?}");
        }
        for good in [
            "a",
            "..hidden",
            "dir/sub/file.h5",
            "x/.longhaul-partial",
            "ünï/cödé",
        ] {
            assert_eq!(check_relative(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn component_and_path_lengths_are_those_linux_can_store() {
        assert!(check_relative(&"x".repeat(255)).is_ok());
        assert!(matches!(
            check_relative(&"x".repeat(256)),
            Err(PathError::ComponentTooLong(_, 256))
        ));
        let deep = vec!["d".repeat(200); 21].join("/");
        assert!(matches!(check_relative(&deep), Err(PathError::TooLong(_))));
    }

    #[test]
    fn links_may_point_within_the_tree_only() {
        assert!(link_stays_inside("a/link", "../b"));
        assert!(link_stays_inside("link", "sub/../file"));
        assert!(!link_stays_inside("link", "../outside"));
        assert!(!link_stays_inside("a/link", "../../x"));
        assert!(!link_stays_inside("link", "/etc/passwd"));
        assert!(!link_stays_inside("a/link", "x/../../../y"));
    }

    #[test]
    fn printed_names_escape_what_a_terminal_would_act_on() {
        let p = Printable::from("ok\nFAKE LOG LINE\x1b[2J");
        let s = p.to_string();
        assert!(!s.contains('\n') && !s.contains('\x1b'), "{s}");
        assert!(s.contains("\\n") && s.contains("\\u{1b}"), "{s}");
    }
}
