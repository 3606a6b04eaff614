//! Words for a POSIX shell: how a path or an argument is written into a command line that a
//! shell reads back as the same word. `longhaul sweep plan --index` prints the `longhaul sim`
//! command of a run, a summary's provenance records the command line that made it, and `send
//! [user@]host:DIR` hands the remote login shell the receiver's command (sh, bash, zsh, fish and
//! csh read a single-quoted word alike).

/// `s` as it is when it is made of characters no shell treats specially (letters, digits and
/// `-_./=:,+@%`), else in single quotes, each `'` inside written `'\''` (close the quotes,
/// an escaped quote, open them again). The empty word is `''`.
pub fn word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::word;

    #[test]
    fn plain_words_stay_and_others_are_quoted() {
        assert_eq!(word("flows.0.cc=reno"), "flows.0.cc=reno");
        assert_eq!(word("user@host:/a/b,c+d%"), "user@host:/a/b,c+d%");
        assert_eq!(word("a b.toml"), "'a b.toml'");
        assert_eq!(word("it's"), r"'it'\''s'");
        assert_eq!(word("$(reboot)"), "'$(reboot)'");
        assert_eq!(word("*"), "'*'");
        assert_eq!(word(""), "''");
    }
}
