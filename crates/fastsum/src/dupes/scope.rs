//! Where an action may act: one rule, asked for every
//! member before anything is done to it, in a dry run too, so that the
//! dry run says what the run does. A member is never acted on when
//!
//! * its path ends in a symbolic link (`-L` followed it): removing or
//!   replacing the path acts on the link, not on the file that was
//!   hashed; nor when the kept file's path does (a hard link to it would
//!   link the symbolic link itself);
//! * its real path is outside every operand's real path: a symbolic link
//!   followed by `-L` led out of what the user named;
//! * it lies in a layer of a mounted overlay (overlayfs): changing it
//!   changes what the overlay shows, and removing it takes the merged
//!   view's file with it, which may be the kept one;
//! * it and the kept file are on two devices and one of them is seen
//!   through an overlay: the other may be a layer under it (one file
//!   seen twice), whether or not the mount table says so.

use std::path::{Path, PathBuf};

use super::Member;
use crate::fs::overlay::Overlay;

/// The operands' real paths and the overlays mounted, taken once before
/// the actions.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// Each operand's real path (an operand that cannot be resolved is
    /// left out: nothing under it is reached anyway).
    roots: Vec<PathBuf>,
    overlays: Vec<Overlay>,
}

impl Scope {
    /// The scope of a search of `operands`, as the file system is now.
    pub(crate) fn of(operands: &[PathBuf]) -> Scope {
        Scope {
            roots: operands
                .iter()
                .filter_map(|o| std::fs::canonicalize(o).ok())
                .collect(),
            overlays: crate::fs::overlay::mounted(),
        }
    }

    /// Why `member` may not be acted on while `kept` is kept, or `None`.
    pub(crate) fn refuses(&self, member: &Member, kept: &Member) -> Option<String> {
        if is_symlink(&member.path) {
            return Some(
                "it is a symbolic link (followed by -L): acting on it would act on the link, \
                 not on the file"
                    .into(),
            );
        }
        if is_symlink(&kept.path) {
            return Some(
                "the kept file's path is a symbolic link (followed by -L): it is left as it is"
                    .into(),
            );
        }
        let real = match std::fs::canonicalize(&member.path) {
            Ok(real) => real,
            Err(e) => return Some(format!("its real path cannot be resolved: {e}")),
        };
        if !self.holds(&real) {
            return Some(format!(
                "its real path {} is outside every operand (a symbolic link led out)",
                crate::escape::display_path(&real)
            ));
        }
        self.overlay_refuses(member, kept)
    }

    /// Whether the real path `real` lies under an operand's real path.
    pub(crate) fn holds(&self, real: &Path) -> bool {
        self.roots.iter().any(|root| real.starts_with(root))
    }

    /// Why an overlay forbids acting on `member` while `kept` is kept:
    ///
    /// 1. `member` lies in a layer of a mounted overlay (placed from the
    ///    mount table): changing it changes what the overlay shows, and if
    ///    the kept file is seen through it, takes the kept file with it;
    /// 2. the two are on different devices and one is seen through an
    ///    overlay file system (`statfs`, whatever the mount table says: an
    ///    overlay of another mount namespace, a layer renamed or reached
    ///    through a link retargeted since the mount, nested overlays):
    ///    the other may be a layer under it, which nothing here can rule
    ///    out, so neither is acted on.
    fn overlay_refuses(&self, member: &Member, kept: &Member) -> Option<String> {
        for overlay in &self.overlays {
            if overlay.holds_in_a_layer(&member.path) {
                let point = crate::escape::display_path(&overlay.point);
                let point = match overlay.unplaced {
                    true => format!(
                        "{point} (not every layer of it could be placed for certain: a relative path was guessed)"
                    ),
                    false => point,
                };
                return Some(match overlay.shows(kept.stamp.dev) {
                    true => format!(
                        "it is in a layer of the overlay at {point} and the kept file is seen \
                         through that overlay: removing it may take the kept file with it (one \
                         file seen twice)"
                    ),
                    false => format!(
                        "it is in a layer of the overlay at {point}: changing it would change \
                         what the overlay shows"
                    ),
                });
            }
        }
        if member.stamp.dev == kept.stamp.dev {
            return None;
        }
        let (viewed, other) = match (
            crate::fs::overlay::is_overlay(&member.path),
            crate::fs::overlay::is_overlay(&kept.path),
        ) {
            (false, false) => return None,
            (true, _) => ("it is", "the kept file"),
            (false, true) => ("the kept file is", "it"),
        };
        Some(format!(
            "{viewed} seen through an overlay file system and {other} is on another device: \
             {other} may be a layer under that overlay (one file seen twice), so neither is \
             acted on"
        ))
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}
