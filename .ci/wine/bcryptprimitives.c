/* ProcessPrng for Wine versions whose bcryptprimitives.dll lacks it: Rust's standard library
   asks it for random bytes (hash map seeds). RtlGenRandom is advapi32's SystemFunction036. */
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
