/* The C API of the recorder, for C, Fortran (through ISO_C_BINDING) and other languages:
 *   uint32_t solve = cubescale_region("solve", __FILE__, __LINE__);
 *   cubescale_enter(solve); ... cubescale_exit();
 * Regions are registered once; enter and exit are the hot path. Bytes and counters go to the
 * current call path of the calling thread; cubescale_write() writes the process's report. */
#ifndef CUBESCALE_MEASURE_C_API_H
#define CUBESCALE_MEASURE_C_API_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint32_t cubescale_region(const char* name, const char* file, int64_t line);
void cubescale_enter(uint32_t region);
void cubescale_exit(void);
void cubescale_bytes(uint64_t sent, uint64_t received);
uint32_t cubescale_counter(const char* name, const char* unit);
void cubescale_add(uint32_t counter, double value);
/* Writes what this process measured so far (every thread's completed calls) to `path` as a
 * one-process .cubex named `process` ("Process 0" if NULL; e.g. "MPI Rank 3" for one rank's
 * part, which `cubescale collate` unifies with the others'). Returns 0, or -1 after printing
 * the reason to stderr. Call while no other thread measures. */
int cubescale_write(const char* path, const char* process);

#ifdef __cplusplus
}
#endif
#endif
