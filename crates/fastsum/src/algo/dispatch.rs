//! `dispatch!`: the single point where a runtime [`Algorithm`] becomes a
//! compile-time [`StreamHasher`] type, and the types it names.
//!
//! [`Algorithm`]: crate::Algorithm
//! [`StreamHasher`]: super::StreamHasher

/// Runs `$body` with the type alias `$H` bound to the [`StreamHasher`] for
/// `$algorithm`: the single point where a runtime algorithm becomes a
/// compile-time type.
macro_rules! dispatch {
    ($algorithm:expr, $H:ident => $body:expr) => {{
        use $crate::algo::hashers as __h;
        match $algorithm {
            $crate::Algorithm::Md5 => {
                type $H = __h::Md5;
                $body
            }
            $crate::Algorithm::Sha1 => {
                type $H = __h::Sha1;
                $body
            }
            $crate::Algorithm::Sha224 => {
                type $H = __h::Sha224;
                $body
            }
            $crate::Algorithm::Sha256 => {
                type $H = __h::Sha256;
                $body
            }
            $crate::Algorithm::Sha384 => {
                type $H = __h::Sha384;
                $body
            }
            $crate::Algorithm::Sha512 => {
                type $H = __h::Sha512;
                $body
            }
            $crate::Algorithm::Blake2b { .. } => {
                type $H = __h::Blake2b;
                $body
            }
            $crate::Algorithm::Blake3 => {
                type $H = __h::Blake3;
                $body
            }
            $crate::Algorithm::Xxh32 => {
                type $H = __h::Xxh32;
                $body
            }
            $crate::Algorithm::Xxh64 => {
                type $H = __h::Xxh64;
                $body
            }
            $crate::Algorithm::Xxh3 => {
                type $H = __h::Xxh3;
                $body
            }
            $crate::Algorithm::Xxh128 => {
                type $H = __h::Xxh128;
                $body
            }
            $crate::Algorithm::Sm3 => {
                type $H = __h::Sm3;
                $body
            }
            $crate::Algorithm::Sha3_224 => {
                type $H = __h::Sha3_224;
                $body
            }
            $crate::Algorithm::Sha3_256 => {
                type $H = __h::Sha3_256;
                $body
            }
            $crate::Algorithm::Sha3_384 => {
                type $H = __h::Sha3_384;
                $body
            }
            $crate::Algorithm::Sha3_512 => {
                type $H = __h::Sha3_512;
                $body
            }
            $crate::Algorithm::Crc => {
                type $H = __h::Crc;
                $body
            }
            $crate::Algorithm::Crc32b => {
                type $H = __h::Crc32b;
                $body
            }
            $crate::Algorithm::Bsd => {
                type $H = __h::Bsd;
                $body
            }
            $crate::Algorithm::Sysv => {
                type $H = __h::Sysv;
                $body
            }
            $crate::Algorithm::Crc32 => {
                type $H = __h::Crc32;
                $body
            }
            $crate::Algorithm::Crc32c => {
                type $H = __h::Crc32c;
                $body
            }
            $crate::Algorithm::Crc64Nvme => {
                type $H = __h::Crc64Nvme;
                $body
            }
            $crate::Algorithm::S3Etag { .. } | $crate::Algorithm::Composite { .. } => {
                type $H = __h::Parts;
                $body
            }
            $crate::Algorithm::Joint { .. } => {
                type $H = __h::Joint;
                $body
            }
        }
    }};
}

pub(crate) use dispatch;

/// The concrete [`StreamHasher`] types, named for `dispatch!`.
pub(crate) mod hashers {
    pub use crate::algo::blake::{Blake2b, Blake3};
    pub use crate::algo::crc::{Crc32, Crc32c, Crc64Nvme};
    pub(crate) use crate::algo::joint::Joint;
    pub use crate::algo::legacy::{Bsd, Crc, Crc32b, Sysv};
    #[cfg(feature = "simd")]
    pub use crate::algo::md5::compress as md5_compress;
    pub use crate::algo::md5::Md5;
    pub(crate) use crate::algo::parts::Parts;
    pub use crate::algo::rustcrypto::{
        Sha1, Sha224, Sha256, Sha384, Sha3_224, Sha3_256, Sha3_384, Sha3_512, Sha512, Sm3,
    };
    pub use crate::algo::xxh::{Xxh128, Xxh3, Xxh32, Xxh64};
}
