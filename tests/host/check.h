/* A tiny counting assert for the host unit tests.
 *
 * CHECK(cond) counts a pass or prints the failed expression with its location
 * and counts a failure; testing continues either way. check_summary() prints
 * the closing line "N passed, M failed" (the line CI reads) and gives the exit
 * status: 0 only when nothing failed. */
#ifndef LITEDAV_TEST_CHECK_H
#define LITEDAV_TEST_CHECK_H

#include <stdio.h>

static unsigned long check_passed, check_failed;

#define CHECK(cond) check_one((cond) != 0, #cond, __FILE__, __LINE__)
/* CHECK with a printf-style note shown only on failure. */
#define CHECKF(cond, ...) \
    do { if (!check_one((cond) != 0, #cond, __FILE__, __LINE__)) \
         { fprintf(stderr, "    "); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

static int check_one(int ok, const char *expr, const char *file, int line)
{
    if (ok) {
        check_passed++;
    } else {
        check_failed++;
        fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, expr);
    }
    return ok;
}

static int check_summary(void)
{
    fflush(stderr);
    printf("%lu passed, %lu failed\n", check_passed, check_failed);
    fflush(stdout);
    return check_failed ? 1 : 0;
}

#endif
