//! Borrowing the bytes of any object with the buffer protocol (`bytes`,
//! `bytearray`, `memoryview`, `array`, numpy arrays, `mmap`) without a
//! copy, as hashlib does: `PyObject_GetBuffer` with `PyBUF_SIMPLE` (one
//! C-contiguous run of bytes, whatever the item type).
//!
//! The stable ABI declares the buffer functions only from Python 3.11 on,
//! so PyO3 offers none under `abi3-py39`; they are exported by every
//! CPython 3 (the functions and `Py_buffer`'s layout are unchanged since
//! 3.3), so they are declared here.

use std::ffi::{c_char, c_int, c_void};

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// CPython's `Py_buffer`.
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

const PYBUF_SIMPLE: c_int = 0;

extern "C" {
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// A buffer held for as long as this lives: its bytes stay where they are
/// and the exporter will not resize them (a `bytearray` refuses to while a
/// buffer is out).
pub struct Bytes {
    view: RawBuffer,
}

// SAFETY: the view is a pointer and length into memory the exporter keeps
// alive and unresized until `PyBuffer_Release`; reading it from another
// thread (with the GIL released) is what hashlib does too. Release happens
// in `drop`, which takes the GIL.
unsafe impl Send for Bytes {}
// SAFETY: as above; `Bytes` only hands out shared reads.
unsafe impl Sync for Bytes {}

impl Bytes {
    /// The bytes of `obj`, or hashlib's errors: `TypeError` for `str`
    /// ("Strings must be encoded before hashing") and for objects without
    /// the buffer protocol, `BufferError` for non-contiguous ones.
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Bytes> {
        if obj.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "Strings must be encoded before hashing",
            ));
        }
        let mut view = std::mem::MaybeUninit::<RawBuffer>::zeroed();
        // SAFETY: obj is a live object (we hold it and the GIL); view
        // points to writable memory the size of a Py_buffer.
        let status = unsafe { PyObject_GetBuffer(obj.as_ptr(), view.as_mut_ptr(), PYBUF_SIMPLE) };
        if status != 0 {
            return Err(PyErr::fetch(obj.py()));
        }
        // SAFETY: PyObject_GetBuffer returned 0, so it filled the view.
        let view = unsafe { view.assume_init() };
        Ok(Bytes { view })
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        if self.view.len <= 0 || self.view.buf.is_null() {
            return &[];
        }
        // SAFETY: PyBUF_SIMPLE gives `len` contiguous bytes at `buf`,
        // valid until the buffer is released in drop.
        unsafe { std::slice::from_raw_parts(self.view.buf.cast::<u8>(), self.view.len as usize) }
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        Python::attach(|_| {
            // SAFETY: the view was filled by PyObject_GetBuffer and is
            // released exactly once, with the GIL held.
            unsafe { PyBuffer_Release(&mut self.view) }
        });
    }
}
