/* Stand-in for generated/mem.h: the memory-mapped windows are the test's chip arrays.
 * LITEDAV_TEST_STOREFLASH_WINDOW: the store flash's window too (32 MiB); the SoC's store flash
 * has none (LITEDAV_TEST_STOREFLASH alone: no region, platforms/store_flash.py). */
#ifndef LITEDAV_TEST_LITESPI_MEM_H
#define LITEDAV_TEST_LITESPI_MEM_H
#include <stdint.h>

extern uint8_t model_chip[];
#define SPIFLASH_BASE ((uintptr_t)model_chip)
#define SPIFLASH_SIZE 0x00200000

#ifdef LITEDAV_TEST_STOREFLASH_WINDOW
extern uint8_t model_store_chip[];
#define STOREFLASH_BASE ((uintptr_t)model_store_chip)
#define STOREFLASH_SIZE 0x02000000
#endif
#endif
