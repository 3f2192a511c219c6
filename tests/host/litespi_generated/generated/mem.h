/* Stand-in for generated/mem.h: the memory-mapped window is the test's chip array. */
#ifndef LITEDAV_TEST_LITESPI_MEM_H
#define LITEDAV_TEST_LITESPI_MEM_H
#include <stdint.h>

extern uint8_t model_chip[];
#define SPIFLASH_BASE ((uintptr_t)model_chip)
#define SPIFLASH_SIZE 0x00200000
#endif
