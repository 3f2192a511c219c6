/* lwIP compiler/platform glue for the host (Linux, glibc, gcc or clang). */
#ifndef LITEDAV_ARCH_CC_H
#define LITEDAV_ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

/* glibc's <sys/time.h> already has struct timeval */
#define LWIP_TIMEVAL_PRIVATE 0
#include <sys/time.h>

#define LWIP_RAND() litedav_rand()
unsigned int litedav_rand(void);

#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
/* An lwIP assertion is a bug: stop with a core dump / sanitizer stack trace. */
#define LWIP_PLATFORM_ASSERT(x) do { \
        fprintf(stderr, "lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
        litedav_halt(); \
    } while (0)
void litedav_halt(void) __attribute__((noreturn));

#endif
