//! Kerberos credentials checked before a GSSAPI socket binds or connects, through the
//! system's GSSAPI library (libgssapi_krb5, which every libzmq built with GSSAPI links): a
//! server needs a key in its keytab, a client a ticket to the service. A missing one is
//! said in Kerberos's own words with the fix, where libzmq would only drop the connection
//! in the handshake and the run would wait for messages that never come.

use crate::error::{Error, Result};
use std::ffi::{c_void, CString};
use std::sync::OnceLock;

/// `gss_buffer_desc`.
#[repr(C)]
struct Buffer {
    length: usize,
    value: *mut c_void,
}

impl Buffer {
    const EMPTY: Buffer = Buffer {
        length: 0,
        value: std::ptr::null_mut(),
    };
}

/// `gss_OID_desc`.
#[repr(C)]
struct Oid {
    length: u32,
    elements: *mut c_void,
}

type Status = u32;
type Name = *mut c_void;

type ImportName = unsafe extern "C" fn(*mut Status, *const Buffer, *const Oid, *mut Name) -> Status;
type ReleaseName = unsafe extern "C" fn(*mut Status, *mut Name) -> Status;
type AcquireCred = unsafe extern "C" fn(
    *mut Status,
    Name,
    u32,
    *mut c_void,
    i32,
    *mut *mut c_void,
    *mut c_void,
    *mut u32,
) -> Status;
type ReleaseCred = unsafe extern "C" fn(*mut Status, *mut *mut c_void) -> Status;
type InitSecContext = unsafe extern "C" fn(
    *mut Status,
    *mut c_void,
    *mut *mut c_void,
    Name,
    *const Oid,
    u32,
    u32,
    *mut c_void,
    *const Buffer,
    *mut *mut Oid,
    *mut Buffer,
    *mut u32,
    *mut u32,
) -> Status;
type DeleteSecContext = unsafe extern "C" fn(*mut Status, *mut *mut c_void, *mut Buffer) -> Status;
type ReleaseBuffer = unsafe extern "C" fn(*mut Status, *mut Buffer) -> Status;
type DisplayStatus =
    unsafe extern "C" fn(*mut Status, Status, i32, *const Oid, *mut u32, *mut Buffer) -> Status;

/// The GSSAPI functions and name types the checks use, found with `dlsym`.
struct Gss {
    import_name: ImportName,
    release_name: ReleaseName,
    acquire_cred: AcquireCred,
    release_cred: ReleaseCred,
    init_sec_context: InitSecContext,
    delete_sec_context: DeleteSecContext,
    release_buffer: ReleaseBuffer,
    display_status: DisplayStatus,
    nt_hostbased: *const Oid,
    nt_krb5_principal: *const Oid,
}

// SAFETY: the name-type pointers point at constants of a library that is never closed.
unsafe impl Send for Gss {}
unsafe impl Sync for Gss {}

/// The library's name on Debian and most distributions.
const LIBRARY: &str = "libgssapi_krb5.so.2";
const GSS_C_ACCEPT: i32 = 2;
const GSS_C_GSS_CODE: i32 = 1;
const GSS_C_MECH_CODE: i32 = 2;

/// The library's functions, or why they could not be had (then nothing is checked before
/// the handshake).
fn gss() -> std::result::Result<&'static Gss, &'static str> {
    static GSS: OnceLock<std::result::Result<Gss, String>> = OnceLock::new();
    GSS.get_or_init(load).as_ref().map_err(|e| e.as_str())
}

fn load() -> std::result::Result<Gss, String> {
    let file = CString::new(LIBRARY).expect("no NUL in the name");
    // SAFETY: dlopen with a valid C string; the handle is never closed.
    let h = unsafe { libc::dlopen(file.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        return Err(format!("{LIBRARY} could not be opened"));
    }
    let sym = |name: &str| -> std::result::Result<*mut c_void, String> {
        let c = CString::new(name).expect("no NUL in the name");
        // SAFETY: a live handle and a valid C string.
        let p = unsafe { libc::dlsym(h, c.as_ptr()) };
        if p.is_null() {
            Err(format!("{LIBRARY} has no {name}"))
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol is the GSSAPI function of RFC 2744's C binding with the signature
    // given in `Gss`; the two name types are exported `gss_OID` variables.
    unsafe {
        Ok(Gss {
            import_name: std::mem::transmute::<*mut c_void, ImportName>(sym("gss_import_name")?),
            release_name: std::mem::transmute::<*mut c_void, ReleaseName>(sym("gss_release_name")?),
            acquire_cred: std::mem::transmute::<*mut c_void, AcquireCred>(sym("gss_acquire_cred")?),
            release_cred: std::mem::transmute::<*mut c_void, ReleaseCred>(sym("gss_release_cred")?),
            init_sec_context: std::mem::transmute::<*mut c_void, InitSecContext>(sym(
                "gss_init_sec_context",
            )?),
            delete_sec_context: std::mem::transmute::<*mut c_void, DeleteSecContext>(sym(
                "gss_delete_sec_context",
            )?),
            release_buffer: std::mem::transmute::<*mut c_void, ReleaseBuffer>(sym(
                "gss_release_buffer",
            )?),
            display_status: std::mem::transmute::<*mut c_void, DisplayStatus>(sym(
                "gss_display_status",
            )?),
            nt_hostbased: *(sym("GSS_C_NT_HOSTBASED_SERVICE")? as *const *const Oid),
            nt_krb5_principal: *(sym("GSS_KRB5_NT_PRINCIPAL_NAME")? as *const *const Oid),
        })
    }
}

/// Whether a status is an error (`GSS_ERROR`: a calling or routine error).
fn failed(major: Status) -> bool {
    major & 0xffff_0000 != 0
}

/// Kerberos's words for a failed call: the GSSAPI status, then the mechanism's.
fn words(g: &Gss, major: Status, minor: Status) -> String {
    let mut out = Vec::new();
    for (code, kind) in [(major, GSS_C_GSS_CODE), (minor, GSS_C_MECH_CODE)] {
        if code == 0 {
            continue;
        }
        let mut ctx = 0u32;
        // Bounded: a status has a handful of messages at most.
        for _ in 0..8 {
            let mut buf = Buffer::EMPTY;
            let mut min = 0;
            // SAFETY: valid out-pointers; the buffer is released below.
            let rc = unsafe {
                (g.display_status)(&mut min, code, kind, std::ptr::null(), &mut ctx, &mut buf)
            };
            if failed(rc) {
                break;
            }
            if !buf.value.is_null() {
                // SAFETY: the library wrote `length` bytes at `value`.
                let b = unsafe { std::slice::from_raw_parts(buf.value as *const u8, buf.length) };
                let s = String::from_utf8_lossy(b)
                    .trim_end_matches('\0')
                    .to_string();
                if !s.is_empty() && !out.contains(&s) {
                    out.push(s);
                }
                // SAFETY: a buffer the library allocated.
                unsafe { (g.release_buffer)(&mut min, &mut buf) };
            }
            if ctx == 0 {
                break;
            }
        }
    }
    out.join(": ")
}

/// What the Kerberos environment variables point at, for the error messages.
fn env(name: &str, default: &str) -> String {
    match std::env::var(name) {
        Ok(v) => format!("{name}={v}"),
        Err(_) => format!("{name} unset: {default}"),
    }
}

/// A GSSAPI server can accept tickets: its keytab has a key. `Ok` also when the system has
/// no GSSAPI library to ask (the handshake then says what it says).
pub fn check_server() -> Result<()> {
    let Ok(g) = gss() else { return Ok(()) };
    let (mut min, mut cred) = (0, std::ptr::null_mut());
    // SAFETY: no name (any key of the keytab), default mechanisms, valid out-pointers.
    let major = unsafe {
        (g.acquire_cred)(
            &mut min,
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            GSS_C_ACCEPT,
            &mut cred,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if !cred.is_null() {
        // SAFETY: a credential the library made.
        unsafe { (g.release_cred)(&mut 0, &mut cred) };
    }
    if !failed(major) {
        return Ok(());
    }
    Err(Error::invalid(
        "security",
        "gssapi",
        format!(
            "the binding side (the GSSAPI server) has no Kerberos key to accept tickets with: {} ({}); give it a keytab that holds the service's key (`kadmin -q 'ktadd -k server.keytab zmqperf/localhost'`, then KRB5_KTNAME=FILE:server.keytab)",
            words(g, major, min),
            env("KRB5_KTNAME", "the default /etc/krb5.keytab")
        ),
    ))
}

/// How a principal's name is read: with a `/` a Kerberos principal (`zmqperf/host@REALM`),
/// otherwise a host-based service (`zmqperf@host`).
pub fn is_krb5_principal(name: &str) -> bool {
    name.contains('/')
}

/// A GSSAPI client can get a ticket to `principal` (read as [`is_krb5_principal`] says):
/// the first step of the handshake, done once here. `Ok` also when the system has no
/// GSSAPI library to ask.
pub fn check_client(principal: &str) -> Result<()> {
    let Ok(g) = gss() else { return Ok(()) };
    let fail = |what: String| {
        Error::invalid(
            "security",
            "gssapi",
            format!(
                "the connecting side (the GSSAPI client) cannot get a Kerberos ticket to the service {principal}: {what} ({}); get a ticket first (`kinit`; KRB5CCNAME names the cache, or KRB5_CLIENT_KTNAME a client keytab), and check that the realm has the service's principal (`kadmin -q 'addprinc -randkey zmqperf/localhost'`) or name the one it has (gssapi_principal in a topology, --gssapi-principal)",
                env("KRB5CCNAME", "the default cache")
            ),
        )
    };
    let text = CString::new(principal)
        .map_err(|_| Error::invalid("gssapi_principal", principal, "no NUL in a name"))?;
    let buf = Buffer {
        length: principal.len(),
        value: text.as_ptr() as *mut c_void,
    };
    let nt = if is_krb5_principal(principal) {
        g.nt_krb5_principal
    } else {
        g.nt_hostbased
    };
    let (mut min, mut name) = (0, std::ptr::null_mut());
    // SAFETY: a valid buffer and name type; the name is released below.
    let major = unsafe { (g.import_name)(&mut min, &buf, nt, &mut name) };
    if failed(major) {
        return Err(fail(words(g, major, min)));
    }
    let mut ctx = std::ptr::null_mut();
    let mut out = Buffer::EMPTY;
    let empty = Buffer::EMPTY;
    // SAFETY: default credential and mechanism, no flags, no channel bindings, an empty
    // input token; the context, token and name are released below.
    let major = unsafe {
        (g.init_sec_context)(
            &mut min,
            std::ptr::null_mut(),
            &mut ctx,
            name,
            std::ptr::null(),
            0,
            0,
            std::ptr::null_mut(),
            &empty,
            std::ptr::null_mut(),
            &mut out,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    let said = failed(major).then(|| words(g, major, min));
    // SAFETY: what the library made above, each released once.
    unsafe {
        let mut m = 0;
        if !out.value.is_null() {
            (g.release_buffer)(&mut m, &mut out);
        }
        if !ctx.is_null() {
            (g.delete_sec_context)(&mut m, &mut ctx, std::ptr::null_mut());
        }
        (g.release_name)(&mut m, &mut name);
    }
    match said {
        Some(w) => Err(fail(w)),
        None => Ok(()),
    }
}
