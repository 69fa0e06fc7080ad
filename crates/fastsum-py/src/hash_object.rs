//! hashlib-style hash objects: `fastsum.new(name, data)`, `fastsum.md5()`
//! and friends, with `update`, `digest`, `hexdigest`, `copy`, `name`,
//! `digest_size` and `block_size`, so `hashlib.file_digest(f,
//! fastsum.md5)` and code written for hashlib work unchanged.

use fastsum::{Algorithm, Hasher};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffer::Bytes;
use crate::errors;

/// Updates this large or larger hash with the GIL released, as hashlib
/// does (below it, releasing costs more than it frees).
const RELEASE_GIL_FROM: usize = 2048;

/// A running hash (the `hashlib` interface).
#[pyclass(module = "fastsum", name = "Hash")]
pub struct Hash {
    /// Boxed: BLAKE3's state is 64-byte aligned, more than a Python
    /// object's memory is.
    inner: Box<Hasher>,
}

impl Hash {
    fn start(
        py: Python<'_>,
        algorithm: Algorithm,
        data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Hash> {
        let mut hash = Hash {
            inner: Box::new(Hasher::new(algorithm)),
        };
        if let Some(data) = data {
            hash.absorb(py, data)?;
        }
        Ok(hash)
    }

    fn absorb(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes = Bytes::of(data)?;
        let slice = bytes.as_slice();
        if slice.len() >= RELEASE_GIL_FROM {
            let inner = &mut self.inner;
            py.detach(|| inner.update(slice));
        } else {
            self.inner.update(slice);
        }
        Ok(())
    }
}

#[pymethods]
impl Hash {
    /// Hashes more bytes (any object with the buffer protocol).
    fn update(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        self.absorb(py, data)
    }

    /// The digest of the bytes so far (the hash goes on).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.digest().as_bytes())
    }

    /// The digest as lowercase hex.
    fn hexdigest(&self) -> String {
        self.inner.digest().to_hex()
    }

    /// An independent copy of the hash so far.
    fn copy(&self) -> Hash {
        Hash {
            inner: self.inner.clone(),
        }
    }

    /// The algorithm's name (`md5`, `sha256`, `sha3_256`, `blake2b`,
    /// `blake3`, `xxh128` ...).
    #[getter]
    fn name(&self) -> &'static str {
        python_name(self.inner.algorithm())
    }

    /// The digest's length in bytes.
    #[getter]
    fn digest_size(&self) -> usize {
        self.inner.algorithm().output_len()
    }

    /// The algorithm's internal block in bytes.
    #[getter]
    fn block_size(&self) -> usize {
        self.inner.block_size()
    }

    fn __repr__(&self) -> String {
        format!("<fastsum.Hash {}>", self.inner.algorithm())
    }
}

/// `fastsum.new(name, data=b"")`: a hash of the named algorithm.
#[pyfunction]
#[pyo3(signature = (name, data = None, *, usedforsecurity = true))]
pub fn new(
    py: Python<'_>,
    name: &str,
    data: Option<&Bound<'_, PyAny>>,
    usedforsecurity: bool,
) -> PyResult<Hash> {
    let _ = usedforsecurity;
    Hash::start(py, errors::algorithm(name)?, data)
}

/// `fastsum.blake2b(data=b"", *, digest_size=64)`.
#[pyfunction]
#[pyo3(signature = (data = None, *, digest_size = 64, usedforsecurity = true))]
pub fn blake2b(
    py: Python<'_>,
    data: Option<&Bound<'_, PyAny>>,
    digest_size: u8,
    usedforsecurity: bool,
) -> PyResult<Hash> {
    let _ = usedforsecurity;
    if !(1..=64).contains(&digest_size) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "digest_size must be between 1 and 64",
        ));
    }
    Hash::start(
        py,
        Algorithm::Blake2b {
            output_len: digest_size,
        },
        data,
    )
}

/// The constructors named for their algorithm (`fastsum.md5(data=b"")` ...).
macro_rules! constructors {
    ($($name:ident => $algorithm:expr),* $(,)?) => {
        $(
            #[doc = concat!("`fastsum.", stringify!($name), "(data=b\"\")`: a new hash.")]
            #[pyfunction]
            #[pyo3(signature = (data = None, *, usedforsecurity = true))]
            pub fn $name(py: Python<'_>, data: Option<&Bound<'_, PyAny>>, usedforsecurity: bool) -> PyResult<Hash> {
                let _ = usedforsecurity;
                Hash::start(py, $algorithm, data)
            }
        )*
        /// Adds every constructor to the module.
        pub fn add_constructors(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            m.add_function(wrap_pyfunction!(blake2b, m)?)?;
            m.add_function(wrap_pyfunction!(new, m)?)?;
            Ok(())
        }
    };
}

/// The name hashlib gives an algorithm: fastsum's, but SHA-3's with an
/// underscore (`sha3_256`, as `hashlib.sha3_256().name`).
pub fn python_name(algorithm: Algorithm) -> &'static str {
    match algorithm {
        Algorithm::Sha3_224 => "sha3_224",
        Algorithm::Sha3_256 => "sha3_256",
        Algorithm::Sha3_384 => "sha3_384",
        Algorithm::Sha3_512 => "sha3_512",
        Algorithm::Blake2b { .. } => "blake2b",
        other => other.name(),
    }
}

constructors!(
    md5 => Algorithm::Md5,
    sha1 => Algorithm::Sha1,
    sha224 => Algorithm::Sha224,
    sha256 => Algorithm::Sha256,
    sha384 => Algorithm::Sha384,
    sha512 => Algorithm::Sha512,
    blake3 => Algorithm::Blake3,
    xxh32 => Algorithm::Xxh32,
    xxh64 => Algorithm::Xxh64,
    xxh3 => Algorithm::Xxh3,
    xxh128 => Algorithm::Xxh128,
    sm3 => Algorithm::Sm3,
    sha3_224 => Algorithm::Sha3_224,
    sha3_256 => Algorithm::Sha3_256,
    sha3_384 => Algorithm::Sha3_384,
    sha3_512 => Algorithm::Sha3_512,
);
