//! Where an action may act (issue 63.12): one rule, asked for every
//! member before anything is done to it, in a dry run too, so that the
//! dry run says what the run does. A member is never acted on when
//!
//! * its path ends in a symbolic link (`-L` followed it): removing or
//!   replacing the path acts on the link, not on the file that was
//!   hashed; nor when the kept file's path does (a hard link to it would
//!   link the symbolic link itself);
//! * its real path is outside every operand's real path: a symbolic link
//!   followed by `-L` led out of what the user named;
//! * it and the kept file are one file seen twice through an overlay
//!   (overlayfs): one is in the merged view, the other in a layer of that
//!   overlay, and removing the layer's file takes the view's with it.

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
        if !self.roots.iter().any(|root| real.starts_with(root)) {
            return Some(format!(
                "its real path {} is outside every operand (a symbolic link led out)",
                crate::escape::display_path(&real)
            ));
        }
        self.one_file_through_an_overlay(member, kept)
    }

    /// Whether `member` and `kept` are one file seen through an overlay and
    /// in one of its layers, said as the reason.
    fn one_file_through_an_overlay(&self, member: &Member, kept: &Member) -> Option<String> {
        if member.stamp.dev == kept.stamp.dev {
            return None;
        }
        for overlay in &self.overlays {
            let (viewed, other) = match (
                overlay.shows(member.stamp.dev),
                overlay.shows(kept.stamp.dev),
            ) {
                (true, false) => (member, kept),
                (false, true) => (kept, member),
                _ => continue,
            };
            let point = crate::escape::display_path(&overlay.point);
            if overlay.unplaced {
                return Some(format!(
                    "{} is seen through the overlay at {point}, whose layers cannot all be \
                     placed: the other may be in one of them",
                    who(viewed, member)
                ));
            }
            if overlay.holds_in_a_layer(&other.path) {
                return Some(format!(
                    "it and the kept file are one file seen twice: {} is in a layer of the \
                     overlay at {point}, {} in its merged view",
                    who(other, member),
                    who(viewed, member)
                ));
            }
        }
        None
    }
}

/// "it" for the member, "the kept file" for the other.
fn who(one: &Member, member: &Member) -> &'static str {
    match std::ptr::eq(one, member) {
        true => "it",
        false => "the kept file",
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}
