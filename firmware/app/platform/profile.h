/* PC-sampling profile of the firmware, in ports that build it (LITEDAV_PROFILE):
 * GET /profile pauses sampling, answers "address count" lines and starts a
 * new profile (a response cut short leaves sampling paused until the next
 * GET /profile completes). */
#ifndef LITEDAV_PROFILE_H
#define LITEDAV_PROFILE_H

#include <stdint.h>

void profile_start(void);
/* The first code bucket at or after index with samples: its start address
 * and count; returns its index (0 address: samples outside the code), or -1. */
int profile_sample(unsigned index, uint32_t *pc, uint32_t *count);
/* Stop counting samples until profile_reset(). */
void profile_pause(void);
/* Clear the histogram and count again. */
void profile_reset(void);

#endif
