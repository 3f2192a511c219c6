/* lwIP platform glue for test_httpd_flow (host, gcc/clang). */
#ifndef LITEDAV_TEST_ARCH_CC_H
#define LITEDAV_TEST_ARCH_CC_H

#include <stdio.h>
#include <stdlib.h>

#define LWIP_TIMEVAL_PRIVATE 0
#include <sys/time.h>

#define LWIP_RAND() ((u32_t)rand())
#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) do { \
        fprintf(stderr, "lwIP assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__); \
        abort(); \
    } while (0)

#endif
