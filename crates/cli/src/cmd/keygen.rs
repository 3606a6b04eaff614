//! `longhaul keygen`: make this host's key pair, or show its public key (`--show`).
//!
//! The files and the trust model: `docs/keys.md` and `longhaul_net::keys`.

use anyhow::Result;
use clap::Args;
use longhaul_net::keys::{self, KeyPair};
use std::path::{Path, PathBuf};

// The doc comments below are clap's `--help` text, printed as written: brackets and angle
// brackets in them are usage syntax, not rustdoc links or HTML.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(Args)]
pub struct KeygenArgs {
    /// The private key file; the public key goes beside it, `.pub` added
    /// [default: ~/.longhaul/id_x25519, or $LONGHAUL_HOME/id_x25519].
    #[arg(short = 'f', long = "file", value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// The public key's comment, e.g. who and where it is [default: USER@HOSTNAME].
    #[arg(short = 'C', long, value_name = "COMMENT", conflicts_with = "show")]
    pub comment: Option<String>,
    /// Replace an existing key pair; every peer that trusted the old key needs the new one.
    #[arg(long, conflicts_with = "show")]
    pub force: bool,
    /// Print the public key line of an existing key pair (on stdout, its fingerprint on
    /// stderr) instead of making one.
    #[arg(long)]
    pub show: bool,
}

pub fn run(a: KeygenArgs) -> Result<()> {
    let path = match a.file {
        Some(p) => p,
        None => keys::default_private_key()?,
    };
    if a.show {
        return show(&path);
    }
    let pair = KeyPair::generate()?;
    let comment = a.comment.or_else(keys::default_comment);
    let pub_path = keys::write_keypair(&path, &pair, comment.as_deref(), a.force)?;
    let authorized = keys::default_authorized_keys()
        .map_or("~/.longhaul/authorized_keys".into(), |p| {
            p.display().to_string()
        });
    println!(
        "{}",
        keys::created_text(
            &path,
            &pub_path,
            &pair.public,
            comment.as_deref(),
            &authorized
        )
    );
    Ok(())
}

/// The public key of the private key at `path`, with the comment of its `.pub` file when that
/// file holds the same key.
fn show(path: &Path) -> Result<()> {
    let pair = keys::read_private_key(path)?;
    let pub_path = keys::public_key_path(path);
    let comment = match keys::read_public_key(&pub_path) {
        Ok((key, comment)) if key == pair.public => comment,
        Ok(_) => {
            eprintln!(
                "warning: {} holds another key than {}; showing the key of the private key",
                pub_path.display(),
                path.display()
            );
            None
        }
        Err(_) => None,
    };
    println!("{}", pair.public.to_line(comment.as_deref()));
    eprintln!("fingerprint {}", pair.public.fingerprint());
    Ok(())
}
