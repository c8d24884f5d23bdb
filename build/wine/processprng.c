/*
 * bcryptprimitives.dll for Wine 8, which lacks it: Go 1.22 and later call
 * ProcessPrng from this DLL for all randomness and refuse to start without
 * it. This one fills the buffer from RtlGenRandom (SystemFunction036 of
 * advapi32). For test prefixes only; Windows ships the real DLL.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
