/* ProcessPrng for Wine before 9.0, which lacks bcryptprimitives.dll: Rust's
 * standard library (1.78 on) imports it on Windows for its random numbers
 * (HashMap seeds), so no Rust program starts under Debian 12's Wine 8
 * without it. `make platforms` builds it with MinGW into the Wine prefix
 * the Windows tests run in. It fills the buffer from RtlGenRandom
 * (SystemFunction036), which Wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG len);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
