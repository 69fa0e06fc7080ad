//! SHA-1, SHA-2, SHA-3 and SM3 from RustCrypto. `sha1` and `sha2` detect the
//! CPU's SHA extensions (SHA-NI) at run time and use them where present.
//! SHA-384, SHA-512 and SHA-3 hand long inputs to OpenSSL where the system
//! has it (`openssl.rs`: faster there), short ones stay here.

use sha2::Digest as _;

use super::openssl::{Ctx, Md, OPENSSL_FROM};
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
    /// SM3 through the `sm3` crate.
    Sm3 => sm3::Sm3,
}

/// Where a hash that OpenSSL may compute is being computed.
#[derive(Clone)]
enum Backend<R> {
    /// Nothing absorbed yet: the first input's length decides.
    Fresh,
    Rust(R),
    OpenSsl(Ctx),
}

impl<R: sha2::Digest + Default + Clone> Backend<R> {
    fn update(&mut self, md: Md, bytes: &[u8]) {
        match self {
            Backend::Rust(r) => r.update(bytes),
            Backend::OpenSsl(ctx) => ctx.update(bytes),
            Backend::Fresh => {
                if bytes.len() >= OPENSSL_FROM {
                    if let Some(mut ctx) = Ctx::new(md) {
                        ctx.update(bytes);
                        *self = Backend::OpenSsl(ctx);
                        return;
                    }
                }
                let mut r = R::default();
                r.update(bytes);
                *self = Backend::Rust(r);
            }
        }
    }

    fn finalize(self, len: usize) -> Digest {
        match self {
            Backend::Fresh => Digest::from_bytes(&R::default().finalize()),
            Backend::Rust(r) => Digest::from_bytes(&r.finalize()),
            Backend::OpenSsl(ctx) => ctx.finish(len),
        }
    }
}

macro_rules! openssl_hasher {
    ($(#[$doc:meta] $name:ident => $inner:ty, $md:expr, $len:expr),* $(,)?) => {$(
        #[$doc]
        #[derive(Clone)]
        pub struct $name(Backend<$inner>);

        impl StreamHasher for $name {
            fn new(_: Algorithm) -> Self {
                $name(Backend::Fresh)
            }
            #[inline]
            fn update(&mut self, bytes: &[u8]) {
                self.0.update($md, bytes);
            }
            fn finalize(self) -> Digest {
                self.0.finalize($len)
            }
        }
    )*};
}

openssl_hasher! {
    /// SHA-384: the `sha2` crate, or OpenSSL for long inputs.
    Sha384 => sha2::Sha384, Md::Sha384, 48,
    /// SHA-512: the `sha2` crate, or OpenSSL for long inputs.
    Sha512 => sha2::Sha512, Md::Sha512, 64,
    /// SHA3-224: the `sha3` crate, or OpenSSL for long inputs.
    Sha3_224 => sha3::Sha3_224, Md::Sha3_224, 28,
    /// SHA3-256: the `sha3` crate, or OpenSSL for long inputs.
    Sha3_256 => sha3::Sha3_256, Md::Sha3_256, 32,
    /// SHA3-384: the `sha3` crate, or OpenSSL for long inputs.
    Sha3_384 => sha3::Sha3_384, Md::Sha3_384, 48,
    /// SHA3-512: the `sha3` crate, or OpenSSL for long inputs.
    Sha3_512 => sha3::Sha3_512, Md::Sha3_512, 64,
}
