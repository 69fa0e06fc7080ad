//! SHA-1, SHA-2, SHA-3 and SM3 from RustCrypto. `sha1` and `sha2` detect the
//! CPU's SHA extensions (SHA-NI) at run time and use them where present.

use sha2::Digest as _;

use super::{Algorithm, StreamHasher};
use crate::digest::Digest;

macro_rules! rustcrypto_hasher {
    ($(#[$doc:meta] $name:ident => $inner:ty),* $(,)?) => {$(
        #[$doc]
        #[derive(Clone, Default)]
        pub struct $name($inner);

        impl StreamHasher for $name {
            fn new(_: Algorithm) -> Self {
                Self::default()
            }
            #[inline]
            fn update(&mut self, bytes: &[u8]) {
                self.0.update(bytes);
            }
            fn finalize(self) -> Digest {
                Digest::from_bytes(&self.0.finalize())
            }
        }
    )*};
}

rustcrypto_hasher! {
    /// SHA-1 through the `sha1` crate.
    Sha1 => sha1::Sha1,
    /// SHA-224 through the `sha2` crate.
    Sha224 => sha2::Sha224,
    /// SHA-256 through the `sha2` crate.
    Sha256 => sha2::Sha256,
    /// SHA-384 through the `sha2` crate.
    Sha384 => sha2::Sha384,
    /// SHA-512 through the `sha2` crate.
    Sha512 => sha2::Sha512,
    /// SM3 through the `sm3` crate.
    Sm3 => sm3::Sm3,
    /// SHA3-224 through the `sha3` crate.
    Sha3_224 => sha3::Sha3_224,
    /// SHA3-256 through the `sha3` crate.
    Sha3_256 => sha3::Sha3_256,
    /// SHA3-384 through the `sha3` crate.
    Sha3_384 => sha3::Sha3_384,
    /// SHA3-512 through the `sha3` crate.
    Sha3_512 => sha3::Sha3_512,
}
