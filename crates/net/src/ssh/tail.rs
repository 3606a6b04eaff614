//! What the remote side prints: its lines read (each cut short at a bound), escaped so they
//! cannot drive this terminal, the last ones kept for an error message and, once the receiver
//! is up, shown as they come.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex};

/// The remote lines kept for an error message.
const TAIL_LINES: usize = 40;
/// Longer remote lines are cut: a login script's output is no reason to hold much memory.
const MAX_LINE: u64 = 16 << 10;

/// What the remote side said on its standard error: the last lines, kept for an error message,
/// and printed as they come (`remote: …`) once the receiver is up.
#[derive(Default)]
pub(super) struct Tail {
    pub(super) lines: VecDeque<String>,
    pub(super) live: bool,
    pub(super) closed: bool,
}

pub(super) type Shared = Arc<Mutex<Tail>>;

pub(super) fn tail_push(t: &Shared, line: String) {
    let mut t = t.lock().unwrap_or_else(|e| e.into_inner());
    if t.live {
        eprintln!("remote: {line}");
    }
    t.lines.push_back(line);
    if t.lines.len() > TAIL_LINES {
        t.lines.pop_front();
    }
}

pub(super) fn tail_text(t: &Shared) -> String {
    let t = t.lock().unwrap_or_else(|e| e.into_inner());
    t.lines.iter().map(|l| format!("\n  remote: {l}")).collect()
}

/// Control characters of a remote line escaped: what the far side prints cannot move this
/// terminal's cursor or forge a line.
pub(super) fn printable(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .trim_end_matches(['\n', '\r'])
        .chars()
        .flat_map(|c| {
            let esc: Vec<char> = if c.is_control() && c != '\t' {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            esc
        })
        .collect()
}

/// Calls `each` with every line of `r` (each cut at [`MAX_LINE`] bytes) until its end.
pub(super) fn for_lines(r: impl Read, mut each: impl FnMut(&[u8])) {
    let mut r = BufReader::new(r);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut r).take(MAX_LINE).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => each(&line),
        }
        // A line cut at the limit: drop the rest of it.
        if !line.ends_with(b"\n") && line.len() as u64 == MAX_LINE {
            let mut rest = Vec::new();
            if r.read_until(b'\n', &mut rest).unwrap_or(0) == 0 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_lines_cannot_drive_the_terminal() {
        assert_eq!(printable(b"ok\x1b[2J\r\n"), "ok\\u{1b}[2J");
        assert_eq!(printable(b"a\tb\n"), "a\tb");
        let mut lines = Vec::new();
        let long = vec![b'x'; MAX_LINE as usize + 10];
        let mut input = long.clone();
        input.extend_from_slice(b"\nnext\n");
        for_lines(&input[..], |l| lines.push(l.len()));
        assert_eq!(lines, vec![MAX_LINE as usize, 5]);
    }
}
