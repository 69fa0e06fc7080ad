/* Wine 8 (Debian 12's) has no bcryptprimitives.dll, and Rust's std (1.78 on)
   asks it for ProcessPrng at start-up. For the smoke test under wine only
   (scripts/tests/windows puts it beside fastsum.exe; a real Windows has the
   DLL): this stand-in answers from RtlGenRandom (advapi32). */
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
