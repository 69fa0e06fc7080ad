//! SHA-384, SHA-512 and SHA-3 through the system's OpenSSL (libcrypto 3),
//! loaded at run time, where it is faster than RustCrypto's portable code:
//! its assembly Keccak and AVX2 SHA-512 hash a 1 GiB file 1.2x and 1.35x
//! faster on the benchmark machine (bench/results/BENCHMARKS-LOG.md, "Issue 33"), and
//! coreutils 9.10 links it for the same algorithms.
//!
//! Nothing is linked at build time: on Linux, `libcrypto.so.3` is opened
//! with `dlopen` on first use; where it is missing (or on another OS, or
//! with `FASTSUM_OPENSSL=0`), RustCrypto does the work. The choice is made
//! per input by its first block of bytes: a short input (under 64 KiB:
//! most files of a tree) is hashed by RustCrypto, whose state costs no
//! allocation and no call through a pointer, a long one by OpenSSL.

#[cfg(target_os = "linux")]
use std::ffi::c_char;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::OnceLock;

/// The first update at least this long goes to OpenSSL.
pub(super) const OPENSSL_FROM: usize = 64 * 1024;

#[cfg(target_os = "linux")]
type MdFetch = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void;
type CtxNew = unsafe extern "C" fn() -> *mut c_void;
type CtxFree = unsafe extern "C" fn(*mut c_void);
type CtxCopy = unsafe extern "C" fn(*mut c_void, *const c_void) -> c_int;
type DigestInit = unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void) -> c_int;
type DigestUpdate = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> c_int;
type DigestFinal = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_uint) -> c_int;

/// The libcrypto functions used, and the digests fetched once.
struct Api {
    ctx_new: CtxNew,
    ctx_free: CtxFree,
    ctx_copy: CtxCopy,
    init: DigestInit,
    update: DigestUpdate,
    finish: DigestFinal,
    /// EVP_MD handles by [`Md`] index (null: not available).
    mds: [usize; 6],
}

/// The digests OpenSSL computes here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Md {
    Sha384 = 0,
    Sha512 = 1,
    Sha3_224 = 2,
    Sha3_256 = 3,
    Sha3_384 = 4,
    Sha3_512 = 5,
}

#[cfg(target_os = "linux")]
const MD_NAMES: [&std::ffi::CStr; 6] = [
    c"SHA384",
    c"SHA512",
    c"SHA3-224",
    c"SHA3-256",
    c"SHA3-384",
    c"SHA3-512",
];

fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(load).as_ref()
}

#[cfg(target_os = "linux")]
fn load() -> Option<Api> {
    if std::env::var_os("FASTSUM_OPENSSL").is_some_and(|v| v == "0") {
        return None;
    }
    // SAFETY: dlopen with a constant NUL-terminated name; the handle is
    // kept for the life of the process (never closed), so the symbols
    // looked up in it stay valid.
    let lib = unsafe {
        libc::dlopen(
            c"libcrypto.so.3".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL,
        )
    };
    if lib.is_null() {
        return None;
    }
    let sym = |name: &std::ffi::CStr| {
        // SAFETY: `lib` is a live handle and `name` is NUL-terminated.
        let p = unsafe { libc::dlsym(lib, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    // SAFETY: each symbol is cast to the signature OpenSSL 3 documents for
    // it (openssl/evp.h); a libcrypto.so.3 is OpenSSL 3's ABI.
    let api = unsafe {
        let fetch: MdFetch = std::mem::transmute(sym(c"EVP_MD_fetch")?);
        let mut mds = [0usize; 6];
        for (slot, name) in mds.iter_mut().zip(MD_NAMES) {
            *slot = fetch(std::ptr::null_mut(), name.as_ptr(), std::ptr::null()) as usize;
        }
        Api {
            ctx_new: std::mem::transmute::<*mut c_void, CtxNew>(sym(c"EVP_MD_CTX_new")?),
            ctx_free: std::mem::transmute::<*mut c_void, CtxFree>(sym(c"EVP_MD_CTX_free")?),
            ctx_copy: std::mem::transmute::<*mut c_void, CtxCopy>(sym(c"EVP_MD_CTX_copy_ex")?),
            init: std::mem::transmute::<*mut c_void, DigestInit>(sym(c"EVP_DigestInit_ex")?),
            update: std::mem::transmute::<*mut c_void, DigestUpdate>(sym(c"EVP_DigestUpdate")?),
            finish: std::mem::transmute::<*mut c_void, DigestFinal>(sym(c"EVP_DigestFinal_ex")?),
            mds,
        }
    };
    Some(api)
}

#[cfg(not(target_os = "linux"))]
fn load() -> Option<Api> {
    None
}

/// One OpenSSL digest in progress (an `EVP_MD_CTX`).
pub(super) struct Ctx {
    api: &'static Api,
    ctx: *mut c_void,
}

// SAFETY: an EVP_MD_CTX is used by one thread at a time (the owner of the
// Ctx, which has no shared access: every method takes &mut self or makes
// a copy); OpenSSL 3 contexts are not bound to the thread that made them.
unsafe impl Send for Ctx {}
// SAFETY: the only &self method (clone) reads the context through
// EVP_MD_CTX_copy_ex, which does not modify it.
unsafe impl Sync for Ctx {}

impl Ctx {
    /// A fresh digest of `md`, if OpenSSL is there and has it.
    pub(super) fn new(md: Md) -> Option<Ctx> {
        let api = api()?;
        let evp_md = api.mds[md as usize] as *const c_void;
        if evp_md.is_null() {
            return None;
        }
        // SAFETY: the functions come from libcrypto (see `load`); a null
        // context is checked, and a failed init frees it.
        unsafe {
            let ctx = (api.ctx_new)();
            if ctx.is_null() {
                return None;
            }
            if (api.init)(ctx, evp_md, std::ptr::null_mut()) != 1 {
                (api.ctx_free)(ctx);
                return None;
            }
            Some(Ctx { api, ctx })
        }
    }

    pub(super) fn update(&mut self, bytes: &[u8]) {
        // SAFETY: `ctx` is a live, initialised context owned by self;
        // `bytes` is valid for its length.
        let ok = unsafe { (self.api.update)(self.ctx, bytes.as_ptr().cast(), bytes.len()) };
        // Only a context in a bad state fails: never answer a digest then.
        assert_eq!(ok, 1, "OpenSSL's EVP_DigestUpdate failed");
    }

    /// The digest (`len` bytes).
    pub(super) fn finish(self, len: usize) -> crate::digest::Digest {
        let mut out = [0u8; 64];
        let mut written: c_uint = 0;
        // SAFETY: `out` holds the 64 bytes of the longest digest here;
        // the context is live (freed by Drop after this).
        let ok = unsafe { (self.api.finish)(self.ctx, out.as_mut_ptr(), &mut written) };
        assert!(
            ok == 1 && written as usize == len,
            "OpenSSL's EVP_DigestFinal_ex failed"
        );
        crate::digest::Digest::from_bytes(&out[..len])
    }
}

impl Clone for Ctx {
    fn clone(&self) -> Ctx {
        // SAFETY: a new context, then a copy of a live one into it; both
        // checked before use.
        unsafe {
            let ctx = (self.api.ctx_new)();
            assert!(!ctx.is_null(), "OpenSSL's EVP_MD_CTX_new failed");
            let ok = (self.api.ctx_copy)(ctx, self.ctx);
            if ok != 1 {
                (self.api.ctx_free)(ctx);
                panic!("OpenSSL's EVP_MD_CTX_copy_ex failed");
            }
            Ctx { api: self.api, ctx }
        }
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: the context was made by ctx_new and is freed once.
        unsafe { (self.api.ctx_free)(self.ctx) }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Algorithm, Hasher};

    /// Long inputs (OpenSSL's, where it is installed) and short ones
    /// (RustCrypto's) give one answer; a state copied mid-stream goes on
    /// as the original (EVP_MD_CTX_copy_ex).
    #[test]
    fn both_backends_agree_and_copies_go_on() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        for a in [
            Algorithm::Sha384,
            Algorithm::Sha512,
            Algorithm::Sha3_224,
            Algorithm::Sha3_256,
            Algorithm::Sha3_384,
            Algorithm::Sha3_512,
        ] {
            let one_shot = a.hash_bytes(&data);
            // Short first piece: RustCrypto all the way.
            let mut short = Hasher::new(a);
            short.update(&data[..100]);
            short.update(&data[100..]);
            assert_eq!(short.digest(), one_shot, "{a}");
            // Long first piece, then a copy mid-stream.
            let mut long = Hasher::new(a);
            long.update(&data[..200_000]);
            let copy = long.clone();
            long.update(&data[200_000..]);
            assert_eq!(long.digest(), one_shot, "{a}");
            assert_eq!(copy.digest(), a.hash_bytes(&data[..200_000]), "{a}");
        }
    }
}
